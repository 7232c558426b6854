// In-process rate-limit store: per-rule slabs of typed arrays, two generations of keys for expiry.
import type { Clock } from '../../clock.ts';
import { WORK_SERIES_SLOTS } from '../../limits.ts';
import {
  clearBuckets,
  clearLog,
  decideBuckets,
  decideLog,
  releaseBuckets,
  releaseLog,
  shapeOf,
  type WindowShape,
} from '../sliding-window.ts';
import { type LockEntry, MARKS_MAX, type RateDecision, type RateLimitStore, type RateRule } from './store.ts';

/**
 * Every rule gets a Partition: a Map from key to a slot number, and one typed-array slab in which
 * slot n owns `shape.slots` numbers. No per-key objects, so a tracked key costs its Map entry,
 * its key string and `slots` numbers (4 bytes per bucket counter, 8 per log time).
 *
 * Expiry without scanning: keys live in `current` or `previous`. Every `horizonMs` the
 * generations rotate: what is still in `previous` was not touched for a whole horizon, so all its
 * admissions have left the window; its slots return to the free list. A key touched in
 * `previous` moves to `current`.
 */
class Partition {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private rotateAt: number;
  private capacity = 0;
  private used = 0;
  private readonly free: number[] = [];
  private times = new Float64Array(0);
  private counts = new Int32Array(0);
  private heads = new Float64Array(0);
  /** When each slot was given to its key: tokens older than that belong to a reset or expired past. */
  private since = new Float64Array(0);
  /** The lock index: key → when its noted lock ends. Ended entries go on read and at each rotation. */
  private readonly locked = new Map<string, number>();

  readonly shape: WindowShape;

  constructor(shape: WindowShape, now: number) {
    this.shape = shape;
    this.rotateAt = now + shape.horizonMs;
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }

  decide(key: string, now: number, consume: boolean): RateDecision {
    this.rotate(now);
    const slot = consume ? this.slotFor(key, now) : this.find(key);
    const shape = this.shape;
    if (slot === undefined) return { allowed: true, limit: shape.limit, remaining: shape.limit, resetMs: 0 };
    const decision =
      shape.kind === 'log'
        ? decideLog(shape, this.times, slot * shape.slots, now, consume)
        : decideBuckets(shape, this.counts, slot * shape.slots, this.heads, slot, now, consume);
    return consume && decision.allowed
      ? {
          allowed: true,
          limit: shape.limit,
          remaining: decision.remaining,
          resetMs: decision.resetMs,
          token: now,
        }
      : {
          allowed: decision.allowed,
          limit: shape.limit,
          remaining: decision.remaining,
          resetMs: decision.resetMs,
        };
  }

  release(key: string, token: number, now: number): void {
    this.rotate(now);
    const slot = this.find(key);
    // A token from before the key's last reset must not take back an admission made after it.
    if (slot === undefined || token < this.since[slot]!) return;
    const offset = slot * this.shape.slots;
    if (this.shape.kind === 'log') releaseLog(this.shape, this.times, offset, token);
    else releaseBuckets(this.shape, this.counts, offset, this.heads, slot, token);
  }

  reset(key: string): void {
    for (const generation of [this.current, this.previous]) {
      const slot = generation.get(key);
      if (slot === undefined) continue;
      generation.delete(key);
      this.freeSlot(slot);
    }
  }

  noteLock(key: string, until: number): void {
    this.locked.set(key, until);
  }

  locks(now: number, max: number): LockEntry[] {
    this.dropEndedLocks(now);
    return [...this.locked]
      .sort((a, b) => b[1] - a[1])
      .slice(0, max)
      .map(([key, until]) => ({ key, resetMs: until - now }));
  }

  private dropEndedLocks(now: number): void {
    for (const [key, until] of this.locked) if (until <= now) this.locked.delete(key);
  }

  /** Drops the generation that has been idle for a whole horizon. */
  rotate(now: number): void {
    if (now < this.rotateAt) return;
    this.dropEndedLocks(now);
    const idle =
      now - this.rotateAt >= this.shape.horizonMs ? [this.previous, this.current] : [this.previous];
    for (const generation of idle) for (const slot of generation.values()) this.freeSlot(slot);
    this.previous = idle.length === 2 ? new Map() : this.current;
    this.current = new Map();
    this.rotateAt = now + this.shape.horizonMs;
  }

  private find(key: string): number | undefined {
    return this.current.get(key) ?? this.previous.get(key);
  }

  private slotFor(key: string, now: number): number {
    let slot = this.current.get(key);
    if (slot !== undefined) return slot;
    slot = this.previous.get(key);
    if (slot !== undefined) this.previous.delete(key);
    else slot = this.allocate(now);
    this.current.set(key, slot);
    return slot;
  }

  private allocate(now: number): number {
    let slot = this.free.pop();
    if (slot !== undefined) {
      this.clear(slot);
    } else {
      if (this.used === this.capacity) this.grow();
      slot = this.used++;
    }
    this.since[slot] = now;
    return slot;
  }

  private clear(slot: number): void {
    const offset = slot * this.shape.slots;
    if (this.shape.kind === 'log') clearLog(this.shape, this.times, offset);
    else clearBuckets(this.counts, offset, this.heads, slot);
  }

  private freeSlot(slot: number): void {
    this.free.push(slot);
  }

  private grow(): void {
    const capacity = Math.max(64, this.capacity * 2);
    const { kind, slots } = this.shape;
    if (kind === 'log') {
      const times = new Float64Array(capacity * slots).fill(Number.NEGATIVE_INFINITY);
      times.set(this.times);
      this.times = times;
    } else {
      const counts = new Int32Array(capacity * slots);
      counts.set(this.counts);
      this.counts = counts;
      const heads = new Float64Array(capacity).fill(Number.NEGATIVE_INFINITY);
      heads.set(this.heads);
      this.heads = heads;
    }
    const since = new Float64Array(capacity);
    since.set(this.since);
    this.since = since;
    this.capacity = capacity;
  }
}

/**
 * Take-once claims of proved-work challenges: per series, a bit per slot and when the record may go
 * (ended series go at the periodic sweep). One bit per challenge issued, so no number of claims
 * fills the record for the others; a series grows its bits as higher slots are claimed, up to
 * WORK_SERIES_SLOTS (a slot past it is refused: the issuer never gives one).
 */
class Claims {
  private readonly series = new Map<string, { bits: Uint8Array; until: number }>();

  claim(series: string, slot: number, ttlMs: number, now: number): boolean {
    if (!Number.isInteger(slot) || slot < 0 || slot >= WORK_SERIES_SLOTS) return false;
    let record = this.series.get(series);
    if (record === undefined || record.until <= now) {
      record = { bits: new Uint8Array(0), until: 0 };
      this.series.set(series, record);
    }
    record.until = Math.max(record.until, now + ttlMs);
    const byte = slot >> 3;
    if (byte >= record.bits.length) {
      const bits = new Uint8Array(
        Math.min(WORK_SERIES_SLOTS >> 3, Math.max(64, byte + 1, record.bits.length * 2)),
      );
      bits.set(record.bits);
      record.bits = bits;
    }
    const bit = 1 << (slot & 7);
    if ((record.bits[byte]! & bit) !== 0) return false;
    record.bits[byte]! |= bit;
    return true;
  }

  sweep(now: number): void {
    for (const [series, { until }] of this.series) if (until <= now) this.series.delete(series);
  }

  clear(): void {
    this.series.clear();
  }
}

/**
 * One scope's single-use marks: holder → its mark and when it expires, in the order put, so the
 * expired ones are dropped from the front without a scan (marks of one scope share a lifetime, so
 * the order is that of expiry). Bounded: at `max` live marks a new holder is refused, with the wait
 * until the first one ends; a live mark is never dropped to make room, so a flood of puts from
 * ever-new holders cannot evict anyone's mark.
 */
class Marks {
  private readonly held = new Map<string, { readonly mark: string; readonly expiresAt: number }>();
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  get size(): number {
    return this.held.size;
  }

  put(holder: string, mark: string, expiresAt: number, now: number): number {
    this.drop(now);
    if (this.held.size >= this.max && !this.held.has(holder)) {
      const first = this.held.values().next().value!;
      return Math.max(1, first.expiresAt - now);
    }
    this.held.delete(holder); // re-inserted at the end: the order stays that of putting
    this.held.set(holder, { mark, expiresAt });
    return 0;
  }

  take(holder: string, mark: string, now: number): boolean {
    const held = this.held.get(holder);
    if (held === undefined || held.mark !== mark) return false;
    this.held.delete(holder);
    return held.expiresAt > now;
  }

  /** Drops expired marks from the front. */
  drop(now: number): void {
    for (const [holder, { expiresAt }] of this.held) {
      if (expiresAt > now) return;
      this.held.delete(holder);
    }
  }
}

export interface MemoryStoreOptions {
  readonly clock: Clock;
  /** How often an idle store drops expired keys on its own (the timer never holds the process open). */
  readonly sweepIntervalMs?: number;
  /** Live single-use marks kept per scope at most (tests make it small); MARKS_MAX by default. */
  readonly marksMax?: number;
}

export class MemoryStore implements RateLimitStore {
  // Keyed by the rule object itself: rules are constants of the policy, so the hot path builds no
  // string to find its partition, and a rule with another budget never shares state.
  private readonly partitions = new Map<RateRule, Partition>();
  private readonly claims = new Claims();
  /** Single-use marks by scope. */
  private readonly marks = new Map<string, Marks>();
  private readonly marksMax: number;
  private readonly clock: Clock;
  private readonly timer: NodeJS.Timeout | null;

  constructor(options: MemoryStoreOptions) {
    this.clock = options.clock;
    this.marksMax = options.marksMax ?? MARKS_MAX;
    const interval = options.sweepIntervalMs ?? 60_000;
    this.timer = interval > 0 ? setInterval(() => this.sweep(), interval).unref() : null;
  }

  consume(rule: RateRule, key: string): RateDecision {
    const now = this.clock.now();
    return this.partition(rule, now).decide(key, now, true);
  }

  peek(rule: RateRule, key: string): RateDecision {
    const now = this.clock.now();
    return this.partition(rule, now).decide(key, now, false);
  }

  release(rule: RateRule, key: string, token: number): void {
    this.partitions.get(rule)?.release(key, token, this.clock.now());
  }

  reset(rule: RateRule, key: string): void {
    this.partitions.get(rule)?.reset(key);
  }

  noteLock(rule: RateRule, key: string, resetMs: number): void {
    const now = this.clock.now();
    this.partition(rule, now).noteLock(key, now + resetMs);
  }

  locks(rule: RateRule, max: number): LockEntry[] {
    return this.partitions.get(rule)?.locks(this.clock.now(), max) ?? [];
  }

  claimOnce(scope: string, series: string, slot: number, ttlMs: number): boolean {
    return this.claims.claim(`${scope}\0${series}`, slot, ttlMs, this.clock.now());
  }

  putOnce(scope: string, holder: string, mark: string, ttlMs: number): number {
    let marks = this.marks.get(scope);
    if (!marks) {
      marks = new Marks(this.marksMax);
      this.marks.set(scope, marks);
    }
    const now = this.clock.now();
    return marks.put(holder, mark, now + ttlMs, now);
  }

  takeOnce(scope: string, holder: string, mark: string): boolean {
    return this.marks.get(scope)?.take(holder, mark, this.clock.now()) ?? false;
  }

  /** Single-use marks currently kept, over all scopes (for tests). */
  get markCount(): number {
    let total = 0;
    for (const marks of this.marks.values()) total += marks.size;
    return total;
  }

  /** Keys currently tracked, over all rules (for tests and metrics). */
  get size(): number {
    let total = 0;
    for (const partition of this.partitions.values()) total += partition.size;
    return total;
  }

  sweep(): void {
    const now = this.clock.now();
    for (const partition of this.partitions.values()) partition.rotate(now);
    this.claims.sweep(now);
    for (const marks of this.marks.values()) marks.drop(now);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.partitions.clear();
    this.claims.clear();
    this.marks.clear();
  }

  private partition(rule: RateRule, now: number): Partition {
    let partition = this.partitions.get(rule);
    if (!partition) {
      partition = new Partition(shapeOf(rule.limit, rule.windowMs), now);
      this.partitions.set(rule, partition);
    }
    return partition;
  }
}
