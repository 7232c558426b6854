// The scenarios npm run bench:flood runs beside its owners during the flood: one file each, listed here.
import type { FloodScenario } from './flood.ts';
import { passkeyScenario } from './flood-passkey.ts';

export const FLOOD_SCENARIOS: readonly FloodScenario[] = [passkeyScenario];
