// The sliding-window algorithm: given a key's stored state and the time, admit or refuse, exactly.
/*
 * Guarantee: in no interval of length `windowMs` (anywhere, not only at window boundaries) does
 * a key admit more than `limit` requests. Two representations keep this guarantee:
 *
 * - log (limit ≤ LOG_MAX_LIMIT): the times of the last `limit` admissions. Exact both ways: it
 *   never over-admits and never under-admits; reset times are exact to the millisecond.
 * - buckets (larger limits): BUCKETS counters of width g = ⌈windowMs / BUCKETS⌉ ms, aligned to
 *   multiples of g. The oldest bucket that still overlaps the window is counted in full, so the
 *   count can only be too high, never too low: it never over-admits. Bound on under-admission:
 *   an admission is counted for at most windowMs + g, so a refused caller waits at most g longer
 *   than with an exact log (56.25 s for a 15-minute window), and any interval of length
 *   windowMs + g still admits at least `limit` requests. Memory per key is BUCKETS + 1 numbers,
 *   whatever the limit.
 *
 * Functions here touch only the arrays they are given; stores decide where those arrays live.
 */

export const LOG_MAX_LIMIT = 32;
export const BUCKETS = 16;
/** Ring slots: a window of BUCKETS buckets overlaps at most BUCKETS + 1 of them. */
export const RING = BUCKETS + 1;

export interface WindowShape {
  readonly kind: 'log' | 'buckets';
  readonly limit: number;
  readonly windowMs: number;
  /** Bucket width in ms (buckets only; 0 for the log). */
  readonly bucketMs: number;
  /** How many numbers one key's state takes. */
  readonly slots: number;
  /** How long after its last admission a key's state still matters. */
  readonly horizonMs: number;
}

export interface WindowDecision {
  readonly allowed: boolean;
  /** How many more requests would be admitted right now (after this one, if it was admitted). */
  readonly remaining: number;
  /** Milliseconds until the next request can be admitted; 0 when one can be now. */
  readonly resetMs: number;
}

export function shapeOf(limit: number, windowMs: number): WindowShape {
  if (limit <= LOG_MAX_LIMIT)
    return { kind: 'log', limit, windowMs, bucketMs: 0, slots: limit, horizonMs: windowMs };
  const bucketMs = Math.ceil(windowMs / BUCKETS);
  return { kind: 'buckets', limit, windowMs, bucketMs, slots: RING, horizonMs: windowMs + bucketMs };
}

// ---------- log: `times[offset … offset+limit)` holds admission times; -Infinity marks a free slot.

/** Decides at `now`; when `consume` and admitted, records `now` in the log. */
export function decideLog(
  shape: WindowShape,
  times: Float64Array,
  offset: number,
  now: number,
  consume: boolean,
): WindowDecision {
  const { limit, windowMs } = shape;
  const end = offset + limit;
  const horizon = now - windowMs;
  let live = 0;
  let oldest = offset;
  for (let i = offset; i < end; i++) {
    const t = times[i]!;
    if (t > horizon) live++;
    if (t < times[oldest]!) oldest = i;
  }
  if (live >= limit) return { allowed: false, remaining: 0, resetMs: times[oldest]! + windowMs - now };
  if (!consume) return { allowed: true, remaining: limit - live, resetMs: 0 };
  // The oldest slot is free or expired (fewer than `limit` are live): reuse it.
  times[oldest] = now;
  if (live + 1 < limit) return { allowed: true, remaining: limit - live - 1, resetMs: 0 };
  let next = times[offset]!;
  for (let i = offset + 1; i < end; i++) if (times[i]! < next) next = times[i]!;
  return { allowed: true, remaining: 0, resetMs: next + windowMs - now };
}

/** Forgets the admission recorded at `at` (a released reservation); false when it is gone. */
export function releaseLog(shape: WindowShape, times: Float64Array, offset: number, at: number): boolean {
  for (let i = offset; i < offset + shape.limit; i++) {
    if (times[i] === at) {
      times[i] = Number.NEGATIVE_INFINITY;
      return true;
    }
  }
  return false;
}

export function clearLog(shape: WindowShape, times: Float64Array, offset: number): void {
  times.fill(Number.NEGATIVE_INFINITY, offset, offset + shape.limit);
}

// ---------- buckets: `counts[offset … offset+RING)` is a ring indexed by bucket number mod RING,
// and `heads[key]` the number of the newest bucket written (-Infinity when none).

/** Decides at `now`; when `consume` and admitted, counts it in the current bucket. */
export function decideBuckets(
  shape: WindowShape,
  counts: Int32Array,
  offset: number,
  heads: Float64Array,
  key: number,
  now: number,
  consume: boolean,
): WindowDecision {
  const { limit, bucketMs } = shape;
  const current = Math.floor(now / bucketMs);
  advance(counts, offset, heads, key, current);
  const first = Math.floor((now - shape.windowMs) / bucketMs);
  const used = sumBuckets(counts, offset, first, current);
  if (used >= limit)
    return { allowed: false, remaining: 0, resetMs: bucketResetMs(shape, counts, offset, first, used, now) };
  if (!consume) return { allowed: true, remaining: limit - used, resetMs: 0 };
  counts[offset + ringSlot(current)]!++;
  return {
    allowed: true,
    remaining: limit - used - 1,
    resetMs: used + 1 < limit ? 0 : bucketResetMs(shape, counts, offset, first, used + 1, now),
  };
}

/** Un-counts one admission made at `at`, if its bucket is still held; false when it is gone. */
export function releaseBuckets(
  shape: WindowShape,
  counts: Int32Array,
  offset: number,
  heads: Float64Array,
  key: number,
  at: number,
): boolean {
  const bucket = Math.floor(at / shape.bucketMs);
  const slot = offset + ringSlot(bucket);
  if (bucket > heads[key]! || bucket <= heads[key]! - RING || counts[slot]! <= 0) return false;
  counts[slot]!--;
  return true;
}

export function clearBuckets(counts: Int32Array, offset: number, heads: Float64Array, key: number): void {
  counts.fill(0, offset, offset + RING);
  heads[key] = Number.NEGATIVE_INFINITY;
}

/** The counts of buckets `first` to `last` (at most RING of them): one modulo, then the ring walked in order. */
function sumBuckets(counts: Int32Array, offset: number, first: number, last: number): number {
  let used = 0;
  let slot = ringSlot(first);
  for (let n = last - first; n >= 0; n--) {
    used += counts[offset + slot]!;
    if (++slot === RING) slot = 0;
  }
  return used;
}

/** Ring position of bucket `b` (b may be negative when the clock starts near zero). */
function ringSlot(b: number): number {
  const slot = b % RING;
  return slot < 0 ? slot + RING : slot;
}

/** Zeroes the ring slots of buckets between the last one written and `current`. */
function advance(
  counts: Int32Array,
  offset: number,
  heads: Float64Array,
  key: number,
  current: number,
): void {
  const head = heads[key]!;
  if (current <= head) return;
  if (current - head >= RING) counts.fill(0, offset, offset + RING);
  else for (let b = head + 1; b <= current; b++) counts[offset + ringSlot(b)] = 0;
  heads[key] = current;
}

/**
 * Bucket b stops counting once (b+1)·g ≤ t − windowMs. Walk from the oldest counted bucket until
 * enough have left for `used` to fall below the limit; the answer is exact for this representation.
 */
function bucketResetMs(
  shape: WindowShape,
  counts: Int32Array,
  offset: number,
  first: number,
  used: number,
  now: number,
): number {
  let remainingUse = used;
  for (let b = first; ; b++) {
    remainingUse -= counts[offset + ringSlot(b)]!;
    if (remainingUse < shape.limit) return Math.max(0, (b + 1) * shape.bucketMs + shape.windowMs - now);
  }
}
