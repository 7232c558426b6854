// Random traffic that reaches rate-limit budgets: both window shapes, dense bursts, idles at edges.
import fc from 'fast-check';
import { loadConfig } from '../../src/config.ts';
import { CONTROLS } from '../../src/rate-limit/policy.ts';
import { LOG_MAX_LIMIT, RING, shapeOf } from '../../src/rate-limit/sliding-window.ts';

/** The largest budget any control has by default (api-authenticated's 1000): the top of the bucket shape we draw. */
export const LARGEST_DEFAULT_LIMIT = Math.max(
  ...Object.values(CONTROLS).map((control) => control.budget(loadConfig({}).rateLimits).limit),
);

export interface DrawnBudget {
  readonly limit: number;
  readonly windowMs: number;
}

/** Limits of the log shape and of the bucket shape in equal parts, and the limits at their edges. */
export const limits = fc.oneof(
  fc.integer({ min: 1, max: LOG_MAX_LIMIT }),
  fc.integer({ min: LOG_MAX_LIMIT + 1, max: LARGEST_DEFAULT_LIMIT }),
  fc.constantFrom(1, LOG_MAX_LIMIT, LOG_MAX_LIMIT + 1, LARGEST_DEFAULT_LIMIT),
);
export const bucketLimits = fc.oneof(
  fc.integer({ min: LOG_MAX_LIMIT + 1, max: LARGEST_DEFAULT_LIMIT }),
  fc.constantFrom(LOG_MAX_LIMIT + 1, LARGEST_DEFAULT_LIMIT),
);

export const budgets = (limit = limits, maxWindowMs = 20_000): fc.Arbitrary<DrawnBudget> =>
  fc.record({ limit, windowMs: fc.integer({ min: 16, max: maxWindowMs }) });

/**
 * A pause between bursts: short, longer than the state's horizon, or at an edge of the
 * representation: about a ring's length of buckets (where the ring is wiped whole or slot by
 * slot) for the bucket shape, a window ± 2 ms (where an admission leaves) for the log.
 */
export function idles({ limit, windowMs }: DrawnBudget): fc.Arbitrary<number> {
  const shape = shapeOf(limit, windowMs);
  const edge =
    shape.kind === 'buckets'
      ? fc
          .tuple(
            fc.integer({ min: RING - 2, max: RING }),
            fc.integer({ min: -shape.bucketMs, max: shape.bucketMs }),
          )
          .map(([buckets, jitter]) => Math.max(0, buckets * shape.bucketMs + jitter))
      : fc.integer({ min: windowMs - 2, max: windowMs + 2 });
  return fc.oneof(
    fc.integer({ min: 0, max: windowMs }),
    edge,
    fc.integer({ min: 0, max: 3 * (shape.horizonMs + 1) }),
  );
}

export interface Burst {
  /** The pause before the burst's first request. */
  readonly idleMs: number;
  readonly count: number;
  /** The pause between two requests of the burst. */
  readonly stepMs: number;
}

/**
 * A burst of up to twice the budget whose first `limit` requests fit in one window (dense), or
 * spread over up to two windows.
 */
export function bursts(budget: DrawnBudget): fc.Arbitrary<Burst> {
  const { limit, windowMs } = budget;
  const dense = Math.floor(windowMs / limit);
  return fc.record({
    idleMs: idles(budget),
    count: fc.integer({ min: 1, max: 2 * limit }),
    stepMs: fc.oneof(fc.integer({ min: 0, max: dense }), fc.integer({ min: 0, max: 2 * dense + 1 })),
  });
}

/**
 * More requests than the budget within less than one window: whatever came before, a limiter
 * that never over-admits must refuse at least one of them. Every traffic has one, so a run that
 * sees no refusal is a failure, not a pass.
 */
export function fillingBurst(budget: DrawnBudget): fc.Arbitrary<Burst> {
  const { limit, windowMs } = budget;
  return fc.record({
    idleMs: idles(budget),
    count: fc.integer({ min: limit + 1, max: 2 * limit }),
    // (2·limit − 1) · ⌊(windowMs − 1) / (2·limit)⌋ < windowMs
    stepMs: fc.integer({ min: 0, max: Math.floor((windowMs - 1) / (2 * limit)) }),
  });
}

/** Up to `maxBursts` bursts with one filling burst among them, at a random place. */
export function traffic(budget: DrawnBudget, maxBursts = 5): fc.Arbitrary<Burst[]> {
  return fc
    .tuple(fc.array(bursts(budget), { maxLength: maxBursts, size: 'max' }), fillingBurst(budget), fc.nat())
    .map(([others, filling, at]) => others.toSpliced(at % (others.length + 1), 0, filling));
}

/** The pause before each request of the traffic, in order. */
export function arrivalGaps(traffic: readonly Burst[]): number[] {
  const gaps: number[] = [];
  for (const { idleMs, count, stepMs } of traffic) {
    for (let i = 0; i < count; i++) gaps.push(i === 0 ? idleMs : stepMs);
  }
  return gaps;
}

/** A budget together with traffic for it. */
export const budgetsWithTraffic = (budget: fc.Arbitrary<DrawnBudget>, maxBursts?: number) =>
  budget.chain((drawn) => fc.tuple(fc.constant(drawn), traffic(drawn, maxBursts)));
