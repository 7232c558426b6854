// The sliding-window algorithm on an injected clock: decisions, resets, its guarantee as properties.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../src/clock.ts';
import { LOG_MAX_LIMIT, shapeOf } from '../../src/rate-limit/sliding-window.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import type { RateRule } from '../../src/rate-limit/stores/store.ts';
import { arrivalGaps, bucketLimits, budgets, budgetsWithTraffic } from '../helpers/budget-traffic.ts';

const MINUTE = 60_000;

function setup(limit: number, windowMs: number, start = 1_700_000_000_000) {
  const clock = new ManualClock(start);
  const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
  const rule: RateRule = { name: 'test', limit, windowMs };
  return { clock, store, rule, consume: (key = 'k') => store.consume(rule, key) };
}

describe('sliding window, log shape (small budgets)', () => {
  it('admits the budget, reports remaining exactly, then refuses with the exact wait', () => {
    const { clock, consume } = setup(3, MINUTE);
    assert.deepEqual(
      [consume(), consume(), consume()].map((d) => [d.allowed, d.remaining]),
      [
        [true, 2],
        [true, 1],
        [true, 0],
      ],
    );
    clock.advance(10_000);
    const refused = consume();
    assert.equal(refused.allowed, false);
    assert.equal(refused.resetMs, 50_000);
    clock.advance(49_999);
    assert.equal(consume().allowed, false);
    clock.advance(1);
    assert.equal(consume().allowed, true);
  });

  it('refuses a burst across what a fixed window would call a boundary', () => {
    // Fixed windows reset at :00 and admit 2× the budget around it; a sliding window does not.
    const { clock, consume } = setup(5, MINUTE, 0);
    clock.set(59_000);
    for (let i = 0; i < 5; i++) assert.equal(consume().allowed, true);
    clock.set(60_001);
    assert.equal(consume().allowed, false, 'the five admissions at 59 s still count at 60.001 s');
    clock.set(119_000);
    assert.equal(consume().allowed, true);
  });

  it('frees each unit exactly one window after it was spent, not all at once', () => {
    const { clock, consume } = setup(2, MINUTE, 0);
    consume();
    clock.set(30_000);
    const second = consume();
    assert.equal(second.remaining, 0);
    assert.equal(second.resetMs, 30_000, 'the first unit frees at 60 s');
    clock.set(60_000);
    const third = consume();
    assert.equal(third.allowed, true);
    assert.equal(third.resetMs, 30_000, 'the second unit frees at 90 s');
  });

  it('reports zero reset while budget remains, and a full budget after the window', () => {
    const { clock, consume, store, rule } = setup(3, MINUTE);
    assert.equal(consume().resetMs, 0);
    clock.advance(MINUTE);
    assert.deepEqual(store.peek(rule, 'k'), { allowed: true, limit: 3, remaining: 3, resetMs: 0 });
  });
});

describe('sliding window, bucket shape (large budgets)', () => {
  const limit = 1000;
  const windowMs = 15 * MINUTE;
  const bucketMs = shapeOf(limit, windowMs).bucketMs;

  it('uses 16 buckets of ⌈window/16⌉ ms', () => {
    assert.equal(shapeOf(limit, windowMs).kind, 'buckets');
    assert.equal(bucketMs, 56_250);
    assert.equal(shapeOf(LOG_MAX_LIMIT, windowMs).kind, 'log');
  });

  it('admits exactly the budget, then refuses until the oldest bucket has left the window', () => {
    const { clock, consume } = setup(limit, windowMs, 0);
    clock.set(10_000); // inside bucket 0
    for (let i = 0; i < limit; i++) assert.equal(consume().allowed, true);
    const refused = consume();
    assert.equal(refused.allowed, false);
    // Bucket 0 ends at 56.25 s and is counted until 56.25 s + 15 min.
    assert.equal(refused.resetMs, bucketMs + windowMs - 10_000);
    clock.set(bucketMs + windowMs - 1);
    assert.equal(consume().allowed, false);
    clock.set(bucketMs + windowMs);
    assert.equal(consume().allowed, true);
  });
});

/** Every decision of a run of arrivals, with its time, for the properties below. */
function run(limit: number, windowMs: number, gaps: number[]) {
  const { clock, store, rule, consume } = setup(limit, windowMs, 5_000_000);
  const admitted: number[] = [];
  const decisions = gaps.map((gap) => {
    clock.advance(gap);
    const decision = consume();
    if (decision.allowed) admitted.push(clock.now());
    return { at: clock.now(), ...decision };
  });
  return { admitted, decisions, clock, consume, peek: () => store.peek(rule, 'k') };
}

/**
 * The traffic always holds more requests than the budget within one window (budget-traffic.ts),
 * so a run without a refusal means the limiter let them all in: the properties never pass on
 * traffic that stays under the limit.
 */
function assertReachedTheLimit(decisions: readonly { allowed: boolean }[]): void {
  assert.ok(
    decisions.some((decision) => !decision.allowed),
    `no refusal in ${decisions.length} requests that hold more than the budget in one window`,
  );
}

/** The most admissions in any half-open interval [t, t + windowMs). */
function maxInAnyWindow(admitted: number[], windowMs: number): number {
  let most = 0;
  let start = 0;
  for (let end = 0; end < admitted.length; end++) {
    while (admitted[end]! - admitted[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

const runs = { numRuns: 300 };

describe('sliding window properties (traffic that fills budgets up to the largest default)', () => {
  it('never admits more than the budget in any interval of the window’s length', () => {
    fc.assert(
      fc.property(budgetsWithTraffic(budgets()), ([{ limit, windowMs }, traffic]) => {
        const { admitted, decisions } = run(limit, windowMs, arrivalGaps(traffic));
        assertReachedTheLimit(decisions);
        assert.ok(maxInAnyWindow(admitted, windowMs) <= limit);
      }),
      runs,
    );
  });

  it('admits a request that arrives when a refusal’s reset says, and not a millisecond earlier', () => {
    fc.assert(
      fc.property(budgetsWithTraffic(budgets()), ([{ limit, windowMs }, traffic]) => {
        const { decisions, clock, consume, peek } = run(limit, windowMs, arrivalGaps(traffic));
        assertReachedTheLimit(decisions);
        // Wherever the traffic left the key, spend what is left: the budget's worth at most.
        let refusal = consume();
        for (let i = 0; i < limit && refusal.allowed; i++) refusal = consume();
        assert.equal(refusal.allowed, false, `admitted ${limit + 1} requests at one instant`);
        assert.ok(refusal.resetMs > 0);
        clock.advance(refusal.resetMs - 1);
        assert.equal(peek().allowed, false, 'admitted a millisecond before the reset');
        clock.advance(1);
        assert.equal(
          consume().allowed,
          true,
          `refused ${refusal.resetMs} ms after a refusal said to wait that long`,
        );
      }),
      runs,
    );
  });

  it('reports as remaining exactly how many immediate requests are admitted', () => {
    fc.assert(
      fc.property(budgetsWithTraffic(budgets()), fc.nat(), ([{ limit, windowMs }, traffic], cut) => {
        // Any point of the traffic, not only its end: often mid-burst, with some budget left.
        const gaps = arrivalGaps(traffic);
        const { decisions, consume } = run(limit, windowMs, gaps.slice(0, 1 + (cut % gaps.length)));
        const { remaining } = decisions[decisions.length - 1]!;
        for (let i = 0; i < remaining; i++) assert.equal(consume().allowed, true);
        assert.equal(consume().allowed, false);
      }),
      runs,
    );
  });

  it('log shape: decides exactly like a list of every admission', () => {
    const logBudgets = budgets(fc.integer({ min: 1, max: LOG_MAX_LIMIT }), 5_000);
    fc.assert(
      fc.property(budgetsWithTraffic(logBudgets), ([{ limit, windowMs }, traffic]) => {
        const { decisions } = run(limit, windowMs, arrivalGaps(traffic));
        assertReachedTheLimit(decisions);
        const model: number[] = [];
        for (const decision of decisions) {
          const live = model.filter((t) => t > decision.at - windowMs);
          assert.equal(decision.allowed, live.length < limit);
          if (decision.allowed) model.push(decision.at);
        }
      }),
      runs,
    );
  });

  it('bucket shape: refuses only when the last window plus one bucket already holds the budget', () => {
    fc.assert(
      fc.property(budgetsWithTraffic(budgets(bucketLimits)), ([{ limit, windowMs }, traffic]) => {
        const { decisions } = run(limit, windowMs, arrivalGaps(traffic));
        assertReachedTheLimit(decisions);
        const { bucketMs } = shapeOf(limit, windowMs);
        const admittedSoFar: number[] = [];
        let oldest = 0; // admittedSoFar[oldest…] are the admissions after decision.at − windowMs − bucketMs
        for (const decision of decisions) {
          if (decision.allowed) admittedSoFar.push(decision.at);
          else {
            while (admittedSoFar[oldest]! <= decision.at - windowMs - bucketMs) oldest++;
            const recent = admittedSoFar.length - oldest;
            assert.ok(recent >= limit, `refused with only ${recent} admissions in window + one bucket`);
          }
        }
      }),
      runs,
    );
  });

  it('bucket shape: decides exactly like a count of the admissions in the buckets the window overlaps', () => {
    fc.assert(
      fc.property(budgetsWithTraffic(budgets(bucketLimits)), ([{ limit, windowMs }, traffic]) => {
        const { decisions } = run(limit, windowMs, arrivalGaps(traffic));
        assertReachedTheLimit(decisions);
        const { bucketMs } = shapeOf(limit, windowMs);
        const admittedSoFar: number[] = [];
        let oldest = 0; // admittedSoFar[oldest…] are the admissions in a bucket the window overlaps
        for (const decision of decisions) {
          const firstBucketStart = Math.floor((decision.at - windowMs) / bucketMs) * bucketMs;
          while (oldest < admittedSoFar.length && admittedSoFar[oldest]! < firstBucketStart) oldest++;
          const counted = admittedSoFar.length - oldest;
          assert.equal(decision.allowed, counted < limit, `at ${decision.at} with ${counted} counted`);
          if (!decision.allowed) continue;
          admittedSoFar.push(decision.at);
          assert.equal(decision.remaining, limit - counted - 1);
        }
      }),
      runs,
    );
  });
});
