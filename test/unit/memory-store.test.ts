// The in-process store against the store contract that every store must pass.
import { describe } from 'node:test';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { storeContract } from '../helpers/store-contract.ts';

describe('MemoryStore', () => {
  storeContract((clock) => new MemoryStore({ clock, sweepIntervalMs: 0 }));
});
