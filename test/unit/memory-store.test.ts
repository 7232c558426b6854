// The in-process store against the store contract, and its bound on single-use marks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { MARKS_MAX } from '../../src/rate-limit/stores/store.ts';
import { storeContract } from '../helpers/store-contract.ts';

describe('MemoryStore', () => {
  storeContract((clock, options) => new MemoryStore({ clock, sweepIntervalMs: 0, ...options }));
});

describe('MemoryStore single-use marks', () => {
  it('keeps at most MARKS_MAX marks a scope by default, refusing newcomers and dropping none', (t) => {
    const clock = new ManualClock(0);
    const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
    t.after(() => store.close());
    for (let i = 0; i < MARKS_MAX; i++) assert.equal(store.putOnce('challenge', String(i), 'm', 60_000), 0);
    assert.equal(store.putOnce('challenge', 'late', 'm', 60_000), 60_000, 'refused until the first ends');
    assert.equal(store.takeOnce('challenge', '0', 'm'), true, 'the oldest is still there');
    assert.equal(store.takeOnce('challenge', String(MARKS_MAX - 1), 'm'), true);
  });

  it('drops expired marks as new ones are put, without waiting for a take', (t) => {
    const clock = new ManualClock(0);
    const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
    t.after(() => store.close());
    store.putOnce('challenge', 'old', 'm', 1000);
    clock.advance(1000);
    store.putOnce('challenge', 'new', 'm', 1000);
    assert.equal(store.markCount, 1);
  });
});
