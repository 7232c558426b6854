// The memory store against a model: several keys, releases, resets, long idles and odd clocks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../src/clock.ts';
import { LOG_MAX_LIMIT, shapeOf } from '../../src/rate-limit/sliding-window.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import type { RateRule } from '../../src/rate-limit/stores/store.ts';

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f'] as const;
type Key = (typeof KEYS)[number];

type Command =
  | { op: 'advance'; ms: number }
  | { op: 'consume'; key: Key; retryAfterRefusal: boolean }
  | { op: 'peek'; key: Key }
  | { op: 'release'; key: Key; pick: number }
  | { op: 'reset'; key: Key }
  | { op: 'sweep' };

/** Commands on a window of `windowMs`: small steps, and jumps up to three windows long so keys idle past the horizon. */
const commands = (windowMs: number, smallStepMs: number, keyCount: number, maxLength: number) =>
  fc.array(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          op: fc.constant('advance' as const),
          ms: fc.integer({ min: 0, max: smallStepMs }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          op: fc.constant('advance' as const),
          ms: fc.integer({ min: 0, max: windowMs * 3 }),
        }),
      },
      {
        weight: 6,
        arbitrary: fc.record({
          op: fc.constant('consume' as const),
          key: fc.constantFrom(...KEYS.slice(0, keyCount)),
          retryAfterRefusal: fc.boolean(),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          op: fc.constant('peek' as const),
          key: fc.constantFrom(...KEYS.slice(0, keyCount)),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          op: fc.constant('release' as const),
          key: fc.constantFrom(...KEYS.slice(0, keyCount)),
          pick: fc.nat(),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          op: fc.constant('reset' as const),
          key: fc.constantFrom(...KEYS.slice(0, keyCount)),
        }),
      },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('sweep' as const) }) },
    ),
    { minLength: Math.floor(maxLength / 2), maxLength, size: 'max' },
  );

/** Every admission not released or reset, per key; tokens handed out since the key's last reset. */
class Model {
  readonly admitted = new Map<Key, number[]>();
  readonly tokens = new Map<Key, number[]>();
  readonly windowMs: number;

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }
  times(key: Key): number[] {
    return this.admitted.get(key) ?? [];
  }
  live(key: Key, now: number, since = now - this.windowMs): number[] {
    return this.times(key).filter((t) => t > since && t <= now);
  }
  admit(key: Key, now: number): void {
    this.admitted.set(key, [...this.times(key), now]);
    this.tokens.set(key, [...(this.tokens.get(key) ?? []), now]);
  }
  /** Takes back one outstanding token of the key (as the login flow does), or null when it has none. */
  takeToken(key: Key, pick: number): number | null {
    const tokens = this.tokens.get(key) ?? [];
    if (tokens.length === 0) return null;
    const [token] = tokens.splice(pick % tokens.length, 1);
    const times = this.times(key);
    times.splice(times.indexOf(token!), 1);
    return token!;
  }
  reset(key: Key): void {
    this.admitted.delete(key);
    this.tokens.delete(key);
  }
}

function setup(limit: number, windowMs: number, start: number) {
  const clock = new ManualClock(start);
  const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
  const rule: RateRule = { name: 'review', limit, windowMs };
  return { clock, store, rule };
}

/** Runs the commands; `check` sees every consume and peek with the model's state before it. */
function run(
  limit: number,
  windowMs: number,
  start: number,
  script: Command[],
  check: (
    kind: 'consume' | 'peek',
    key: Key,
    now: number,
    decision: ReturnType<MemoryStore['peek']>,
    model: Model,
  ) => void,
) {
  const { clock, store, rule } = setup(limit, windowMs, start);
  const model = new Model(windowMs);
  for (const command of script) {
    switch (command.op) {
      case 'advance':
        clock.advance(command.ms);
        break;
      case 'sweep':
        store.sweep();
        break;
      case 'reset':
        store.reset(rule, command.key);
        model.reset(command.key);
        break;
      case 'release': {
        const token = model.takeToken(command.key, command.pick);
        if (token !== null) store.release(rule, command.key, token);
        break;
      }
      case 'peek':
        check('peek', command.key, clock.now(), store.peek(rule, command.key), model);
        break;
      case 'consume': {
        const decision = store.consume(rule, command.key);
        check('consume', command.key, clock.now(), decision, model);
        if (decision.allowed) {
          assert.equal(decision.token, clock.now(), 'the token is the admission time');
          model.admit(command.key, clock.now());
        } else if (command.retryAfterRefusal) {
          // Contract §5: a client that waits the reset it was told and retries is admitted.
          clock.advance(decision.resetMs);
          const retry = store.consume(rule, command.key);
          assert.equal(retry.allowed, true, `refused again after waiting ${decision.resetMs} ms`);
          model.admit(command.key, clock.now());
        }
        break;
      }
    }
  }
}

const starts = fc.oneof(fc.constant(1_700_000_000_000), fc.integer({ min: -50_000, max: 50_000 }));

describe('MemoryStore against a model (several keys, releases, resets, long idles)', () => {
  it('log shape: every decision is exactly the model’s, whatever the generation a key sits in', () => {
    // Small budgets most of the time, so keys are often at their limit when a generation rotates.
    const limits = fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: LOG_MAX_LIMIT }));
    const windows = fc.integer({ min: 4, max: 4_000 });
    fc.assert(
      fc.property(
        limits,
        windows.chain((w) => fc.tuple(fc.constant(w), commands(w, Math.max(1, Math.floor(w / 8)), 6, 300))),
        starts,
        (limit, [windowMs, script], start) => {
          run(limit, windowMs, start, script, (kind, key, now, decision, model) => {
            const live = model.live(key, now);
            const allowed = live.length < limit;
            assert.equal(decision.allowed, allowed, `${kind} ${key} at ${now}`);
            if (!allowed) {
              assert.equal(decision.remaining, 0);
              assert.equal(decision.resetMs, Math.min(...live) + windowMs - now, 'exact wait');
            } else if (kind === 'peek') {
              assert.deepEqual([decision.remaining, decision.resetMs], [limit - live.length, 0]);
            } else {
              const after = [...live, now];
              const reset = after.length < limit ? 0 : Math.min(...after) + windowMs - now;
              assert.deepEqual([decision.remaining, decision.resetMs], [limit - after.length, reset]);
            }
          });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('bucket shape: never over-admits, refuses only on a full window plus one bucket, peeks agree', () => {
    const limits = fc.integer({ min: LOG_MAX_LIMIT + 1, max: 60 });
    const windows = fc.integer({ min: 16, max: 4_000 });
    fc.assert(
      fc.property(
        limits,
        // Dense arrivals on few keys: a bucket-shaped budget only fills with many requests per window.
        windows.chain((w) => fc.tuple(fc.constant(w), commands(w, Math.max(1, Math.floor(w / 100)), 3, 800))),
        starts,
        (limit, [windowMs, script], start) => {
          const { bucketMs } = shapeOf(limit, windowMs);
          run(limit, windowMs, start, script, (kind, key, now, decision, model) => {
            const live = model.live(key, now).length;
            if (decision.allowed) {
              assert.ok(live < limit, `${kind} ${key} admitted with ${live} live of ${limit}`);
              if (decision.remaining > 0) assert.equal(decision.resetMs, 0, 'no wait while budget remains');
            } else {
              const firstCounted = Math.floor((now - windowMs) / bucketMs) * bucketMs - 1;
              const held = model.live(key, now, firstCounted).length;
              assert.ok(held >= limit, `${kind} ${key} refused with ${held} in the last window + bucket`);
              assert.ok(decision.resetMs > 0 && decision.resetMs <= windowMs + bucketMs);
            }
          });
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('MemoryStore generations', () => {
  it('keeps a key moved back from the previous generation, and drops it only after a whole idle horizon', () => {
    const { clock, store, rule } = setup(2, 1_000, 0);
    store.consume(rule, 'a'); // t=0
    clock.advance(999);
    store.consume(rule, 'b'); // rotates nothing yet
    clock.advance(1); // t=1000: rotation, a and b move to previous
    store.consume(rule, 'b');
    assert.equal(store.peek(rule, 'b').allowed, false, 'b: admissions at 999 and 1000 are both live');
    clock.advance(998); // t=1998
    assert.equal(store.consume(rule, 'b').allowed, false, '999 and 1000 are still live at 1998');
    clock.advance(1); // t=1999
    assert.equal(store.consume(rule, 'b').allowed, true, '999 has left; b is admitted');
    clock.advance(1); // t=2000: the next rotation drops a (idle since 0) and keeps b
    assert.equal(store.peek(rule, 'b').remaining, 1, 'b keeps 1999; 1000 has left');
    assert.equal(store.size, 1, 'a is gone');
  });

  it('resets a key that sits in the previous generation, and its slot is never handed out twice', () => {
    const { clock, store, rule } = setup(1, 1_000, 0);
    store.consume(rule, 'a');
    clock.advance(1_000); // a is in previous
    store.consume(rule, 'x');
    store.reset(rule, 'a');
    store.consume(rule, 'b'); // takes a's freed slot
    clock.advance(1_000); // rotation frees previous: a is no longer in it
    store.consume(rule, 'c');
    store.consume(rule, 'd');
    assert.equal(store.consume(rule, 'c').allowed, false);
    assert.equal(store.consume(rule, 'd').allowed, false, 'c and d do not share a slot');
    assert.equal(store.peek(rule, 'b').allowed, true, 'b (from t=1000) has left the window');
  });

  it('after a long idle, a stale token of a dropped key takes back nothing from its new admissions', () => {
    for (const limit of [3, 40]) {
      const { clock, store, rule } = setup(limit, 16_000, 0);
      const stale = store.consume(rule, 'k').token!;
      clock.advance(100_000);
      for (let i = 0; i < limit; i++) assert.equal(store.consume(rule, 'k').allowed, true);
      store.release(rule, 'k', stale);
      assert.equal(store.consume(rule, 'k').allowed, false, `limit ${limit}`);
    }
  });
});

describe('MemoryStore.release after reset', () => {
  // A token kept across a reset of its key (a successful login or an admin's reset clears an
  // account) must not take back an admission made after the reset: without a guard it would land
  // in the same bucket (or, for the log, the same time) and hand out one unit too many.
  it('bucket shape: a token issued before a reset takes back nothing admitted after it', () => {
    const { clock, store, rule } = setup(40, 15 * 60_000, 1_700_000_000_000);
    const stale = store.consume(rule, 'acct').token!;
    // Tokens are admission times in ms: a reset one millisecond later is the finest it can tell apart.
    clock.advance(1);
    store.reset(rule, 'acct');
    for (let i = 0; i < 40; i++) assert.equal(store.consume(rule, 'acct').allowed, true);
    store.release(rule, 'acct', stale);
    assert.equal(store.consume(rule, 'acct').allowed, false, '41 admitted in one window since the reset');
  });

  it('log shape: a token issued before a reset takes back nothing admitted after it', () => {
    const { clock, store, rule } = setup(3, 15 * 60_000, 1_700_000_000_000);
    const stale = store.consume(rule, 'acct').token!;
    clock.advance(1);
    store.reset(rule, 'acct');
    for (let i = 0; i < 3; i++) assert.equal(store.consume(rule, 'acct').allowed, true);
    store.release(rule, 'acct', stale);
    assert.equal(store.consume(rule, 'acct').allowed, false, '4 admitted in one window since the reset');
  });
});
