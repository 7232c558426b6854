// The memory store against a model: several keys, releases, resets, long idles and odd clocks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../src/clock.ts';
import { LOG_MAX_LIMIT, shapeOf } from '../../src/rate-limit/sliding-window.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import type { RateRule } from '../../src/rate-limit/stores/store.ts';
import {
  type Burst,
  bucketLimits,
  budgets,
  bursts,
  type DrawnBudget,
  fillingBurst,
  idles,
} from '../helpers/budget-traffic.ts';

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f'] as const;
type Key = (typeof KEYS)[number];

type Command =
  | { op: 'advance'; ms: number }
  | { op: 'consume'; key: Key; retryAfterRefusal: boolean }
  | { op: 'burst'; key: Key; count: number; stepMs: number }
  | { op: 'peek'; key: Key }
  | { op: 'release'; key: Key; pick: number }
  | { op: 'reset'; key: Key }
  | { op: 'sweep' };

/**
 * Commands on a budget: small steps, idles past the horizon and at the ring's edges
 * (budget-traffic.ts), single consumes, dense bursts of up to twice the budget, and one burst on
 * key `a` that holds more than the budget within a window, so every script reaches the limit.
 */
const commands = (budget: DrawnBudget, smallStepMs: number, keyCount: number, maxLength: number) => {
  const key = fc.constantFrom(...KEYS.slice(0, keyCount));
  const burst = (shape: fc.Arbitrary<Burst>, on: fc.Arbitrary<Key>) =>
    fc.tuple(on, shape).map(([key, { idleMs, count, stepMs }]): Command[] => [
      { op: 'advance', ms: idleMs },
      { op: 'burst', key, count, stepMs },
    ]);
  const single = (command: fc.Arbitrary<Command>) => command.map((c) => [c]);
  return fc
    .tuple(
      fc.array(
        fc.oneof(
          {
            weight: 3,
            arbitrary: single(
              fc.record({
                op: fc.constant('advance' as const),
                ms: fc.integer({ min: 0, max: smallStepMs }),
              }),
            ),
          },
          {
            weight: 1,
            arbitrary: single(fc.record({ op: fc.constant('advance' as const), ms: idles(budget) })),
          },
          {
            weight: 6,
            arbitrary: single(
              fc.record({ op: fc.constant('consume' as const), key, retryAfterRefusal: fc.boolean() }),
            ),
          },
          { weight: 1, arbitrary: burst(bursts(budget), key) },
          { weight: 2, arbitrary: single(fc.record({ op: fc.constant('peek' as const), key })) },
          {
            weight: 2,
            arbitrary: single(fc.record({ op: fc.constant('release' as const), key, pick: fc.nat() })),
          },
          { weight: 1, arbitrary: single(fc.record({ op: fc.constant('reset' as const), key })) },
          { weight: 1, arbitrary: single(fc.record({ op: fc.constant('sweep' as const) })) },
        ),
        { minLength: Math.floor(maxLength / 2), maxLength, size: 'max' },
      ),
      burst(fillingBurst(budget), fc.constant('a' as const)),
      fc.nat(),
    )
    .map(([script, filling, at]) => script.toSpliced(at % (script.length + 1), 0, filling).flat());
};

/** The first index of the sorted `times` whose time is after `t`. */
function after(times: readonly number[], t: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (times[middle]! <= t) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Every admission not released or reset, per key, oldest first; tokens handed out since the key's last reset. */
class Model {
  readonly admitted = new Map<Key, number[]>();
  readonly tokens = new Map<Key, number[]>();

  times(key: Key): number[] {
    let times = this.admitted.get(key);
    if (!times) {
      times = [];
      this.admitted.set(key, times);
    }
    return times;
  }
  /** The key's admissions after `since`, oldest first (the clock never goes back, so none is after now). */
  since(key: Key, since: number): number[] {
    const times = this.times(key);
    return times.slice(after(times, since));
  }
  count(key: Key, since: number): number {
    const times = this.times(key);
    return times.length - after(times, since);
  }
  admit(key: Key, now: number): void {
    this.times(key).push(now);
    const tokens = this.tokens.get(key);
    if (tokens) tokens.push(now);
    else this.tokens.set(key, [now]);
  }
  /** Takes back one outstanding token of the key (as the login flow does), or null when it has none. */
  takeToken(key: Key, pick: number): number | null {
    const tokens = this.tokens.get(key) ?? [];
    if (tokens.length === 0) return null;
    const [token] = tokens.splice(pick % tokens.length, 1);
    const times = this.times(key);
    times.splice(after(times, token!) - 1, 1);
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

/**
 * Runs the commands; `check` sees every consume and peek with the model's state before it.
 * Answers how many consumes were refused: the scripts hold more than the budget within one
 * window, so a run with none let more in than the budget, whatever `check` said.
 */
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
): number {
  const { clock, store, rule } = setup(limit, windowMs, start);
  const model = new Model();
  let refusals = 0;
  const consume = (key: Key) => {
    const decision = store.consume(rule, key);
    check('consume', key, clock.now(), decision, model);
    if (decision.allowed) {
      if (decision.token !== clock.now())
        assert.equal(decision.token, clock.now(), 'the token is the admission time');
      model.admit(key, clock.now());
    } else refusals++;
    return decision;
  };
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
      case 'burst':
        for (let i = 0; i < command.count; i++) {
          if (i > 0) clock.advance(command.stepMs);
          consume(command.key);
        }
        break;
      case 'consume': {
        const decision = consume(command.key);
        if (!decision.allowed && command.retryAfterRefusal) {
          // docs/rules.md#rate-limits: a client that waits the reset it was told and retries is admitted.
          clock.advance(decision.resetMs);
          const retry = store.consume(rule, command.key);
          assert.equal(retry.allowed, true, `refused again after waiting ${decision.resetMs} ms`);
          model.admit(command.key, clock.now());
        }
        break;
      }
    }
  }
  assert.ok(refusals > 0, 'the script holds more than the budget in one window, yet nothing was refused');
  return refusals;
}

const starts = fc.oneof(fc.constant(1_700_000_000_000), fc.integer({ min: -50_000, max: 50_000 }));

describe('MemoryStore against a model (several keys, bursts, releases, resets, long idles)', () => {
  it('log shape: every decision is exactly the model’s, whatever the generation a key sits in', () => {
    // Small budgets half the time, so keys are often at their limit when a generation rotates.
    const limits = fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: LOG_MAX_LIMIT }));
    fc.assert(
      fc.property(
        budgets(limits, 4_000).chain((b) =>
          fc.tuple(fc.constant(b), commands(b, Math.max(1, Math.floor(b.windowMs / 8)), 6, 200)),
        ),
        starts,
        ([{ limit, windowMs }, script], start) => {
          run(limit, windowMs, start, script, (kind, key, now, decision, model) => {
            const live = model.since(key, now - windowMs);
            const allowed = live.length < limit;
            assert.equal(decision.allowed, allowed, `${kind} ${key} at ${now}`);
            if (!allowed) {
              assert.equal(decision.remaining, 0);
              assert.equal(decision.resetMs, live[0]! + windowMs - now, 'exact wait');
            } else if (kind === 'peek') {
              assert.deepEqual([decision.remaining, decision.resetMs], [limit - live.length, 0]);
            } else {
              const afterThis = [...live, now];
              const reset = afterThis.length < limit ? 0 : afterThis[0]! + windowMs - now;
              assert.deepEqual([decision.remaining, decision.resetMs], [limit - afterThis.length, reset]);
            }
          });
        },
      ),
      { numRuns: 400 },
    );
  });

  it('bucket shape: decides exactly like a count of the buckets the window overlaps, so never over-admits', () => {
    fc.assert(
      fc.property(
        budgets(bucketLimits, 4_000).chain((b) =>
          // Dense single arrivals on few keys besides the bursts.
          fc.tuple(fc.constant(b), commands(b, Math.max(1, Math.floor(b.windowMs / 100)), 3, 200)),
        ),
        starts,
        ([{ limit, windowMs }, script], start) => {
          const { bucketMs } = shapeOf(limit, windowMs);
          run(limit, windowMs, start, script, (kind, key, now, decision, model) => {
            // Counted: every admission from the start of the oldest bucket the window overlaps.
            const times = model.times(key);
            const oldest = after(times, Math.floor((now - windowMs) / bucketMs) * bucketMs - 1);
            const counted = times.length - oldest;
            const allowed = counted < limit;
            const where = () => `${kind} ${key} at ${now} with ${counted} counted`;
            if (decision.allowed !== allowed) assert.equal(decision.allowed, allowed, where());
            /** The wait until the bucket of the n-th oldest counted admission (0-based; `now` past the end) has left. */
            const waitFor = (n: number) =>
              (Math.floor((times[oldest + n] ?? now) / bucketMs) + 1) * bucketMs + windowMs - now;
            if (!allowed) {
              const reset = waitFor(counted - limit);
              if (decision.remaining !== 0 || decision.resetMs !== reset)
                assert.deepEqual(
                  [decision.remaining, decision.resetMs],
                  [0, reset],
                  `${where()}: exact wait`,
                );
              assert.ok(decision.resetMs > 0 && decision.resetMs <= windowMs + bucketMs);
              return;
            }
            const live = model.count(key, now - windowMs);
            if (live >= limit) assert.fail(`${where()}: admitted with ${live} live of ${limit}`);
            const remaining = limit - counted - (kind === 'peek' ? 0 : 1);
            const reset = kind === 'peek' || remaining > 0 ? 0 : waitFor(0);
            if (decision.remaining !== remaining || decision.resetMs !== reset)
              assert.deepEqual([decision.remaining, decision.resetMs], [remaining, reset], where());
          });
        },
      ),
      { numRuns: 300 },
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
