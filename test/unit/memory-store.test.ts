// The in-process store against the store contract that every store must pass, and its bound on single-use marks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { MARKS_MAX, MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { storeContract } from '../helpers/store-contract.ts';

describe('MemoryStore', () => {
  storeContract((clock) => new MemoryStore({ clock, sweepIntervalMs: 0 }));
});

describe('MemoryStore single-use marks', () => {
  it('keeps at most MARKS_MAX marks, dropping the oldest first', (t) => {
    const clock = new ManualClock(0);
    const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
    t.after(() => store.close());
    for (let i = 0; i <= MARKS_MAX; i++) store.putOnce('challenge', String(i), 60_000);
    assert.equal(store.takeOnce('challenge', '0'), false, 'the oldest was pushed out');
    assert.equal(store.takeOnce('challenge', '1'), true);
    assert.equal(store.takeOnce('challenge', String(MARKS_MAX)), true);
  });

  it('drops expired marks as new ones are put, without waiting for a take', (t) => {
    const clock = new ManualClock(0);
    const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
    t.after(() => store.close());
    store.putOnce('challenge', 'old', 1000);
    clock.advance(1000);
    store.putOnce('challenge', 'new', 1000);
    assert.equal(store.markCount, 1);
  });
});
