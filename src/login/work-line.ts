// The shared lane's line by proved work (docs/rules.md#proved-work): most bits first, then arrival.
import { WORK_BITS_MAX } from './proved-work.ts';

/** What the line needs of an attempt: its proved bits, when it came, and whether it still waits. */
export interface LineEntry {
  readonly work: number;
  readonly queuedAt: number;
  readonly state: string;
}

const QUEUED = 'queued';
/** A bucket's passed entries are dropped in batches of at least this many (one copy per batch). */
const COMPACT_AFTER = 1024;

/** One bucket: the attempts of one number of bits, oldest first; entries that left stay until passed. */
class Bucket<T extends LineEntry> {
  items: T[] = [];
  head = 0;
  /** Entries still queued. */
  live = 0;

  /**
   * The oldest entry still queued, dropping those that left before it; null when none. The head
   * moves past them, and the array lets go of what lies behind the head as it goes: a bucket a
   * flood keeps busy never empties, so waiting for it to empty would keep every attempt served.
   */
  first(): T | null {
    while (this.head < this.items.length) {
      const entry = this.items[this.head]!;
      if (entry.state === QUEUED) {
        this.compact();
        return entry;
      }
      this.head++;
    }
    this.compact();
    return null;
  }

  /** The newest entry still queued, dropping those that left after it; null when none. */
  last(): T | null {
    while (this.items.length > this.head) {
      const entry = this.items.at(-1)!;
      if (entry.state === QUEUED) return entry;
      this.items.pop();
    }
    this.compact();
    return null;
  }

  /** Lets go of every entry (none of them is queued). */
  clear(): void {
    this.items = [];
    this.head = 0;
  }

  /**
   * Drops the consumed head once it is most of the array: copying the rest then costs no more than
   * the entries passed since the last copy, and the array holds at most twice the entries ahead of
   * the head (or COMPACT_AFTER, whichever is more).
   */
  compact(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > COMPACT_AFTER && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * Attempts in buckets by proved bits (0 … WORK_BITS_MAX), each bucket in arrival order: taking the
 * best, the least, or counting those ahead of a newcomer walks the buckets, never the attempts.
 * The gate changes an entry's state when it leaves and tells the line (`left`), which keeps its
 * counts; the entry itself is dropped lazily, when a walk reaches it.
 */
export class WorkLine<T extends LineEntry> {
  private readonly buckets = Array.from({ length: WORK_BITS_MAX + 1 }, () => new Bucket<T>());
  private queued = 0;

  /** Attempts waiting. */
  get size(): number {
    return this.queued;
  }

  /** Attempts the line still references, waiting or not (what it costs in memory). */
  get held(): number {
    let count = 0;
    for (const bucket of this.buckets) count += bucket.items.length;
    return count;
  }

  /** The bits an attempt is ordered by: its proved work, capped at WORK_BITS_MAX. */
  static bitsOf(work: number): number {
    return Math.max(0, Math.min(WORK_BITS_MAX, Math.floor(work)));
  }

  push(entry: T): void {
    const bucket = this.buckets[WorkLine.bitsOf(entry.work)]!;
    bucket.items.push(entry);
    bucket.live++;
    this.queued++;
  }

  /**
   * An entry left the queue (its state is no longer queued): it counts no more. When it was the
   * last of its bits, the bucket lets go of every entry it still held: a walk may never pass them
   * again, and they would keep the finished attempts of the last burst in memory.
   */
  left(entry: T): void {
    const bucket = this.buckets[WorkLine.bitsOf(entry.work)]!;
    if (--bucket.live === 0) bucket.clear();
    this.queued--;
  }

  /** Waiting attempts that proved at least `bits`: the ones served before a newcomer with `bits`. */
  atLeast(bits: number): number {
    let count = 0;
    for (let b = WorkLine.bitsOf(bits); b <= WORK_BITS_MAX; b++) count += this.buckets[b]!.live;
    return count;
  }

  /** The attempt to serve next: the most work, the oldest of that work; null when none waits. */
  best(): T | null {
    for (let b = WORK_BITS_MAX; b >= 0; b--) {
      const bucket = this.buckets[b]!;
      if (bucket.live > 0) return bucket.first();
    }
    return null;
  }

  /** The attempt to shed first: the least work, the newest of that work; null when none waits. */
  least(): T | null {
    for (let b = 0; b <= WORK_BITS_MAX; b++) {
      const bucket = this.buckets[b]!;
      if (bucket.live > 0) return bucket.last();
    }
    return null;
  }

  /** Every waiting attempt that came before `cutoff`: the oldest of each bucket, walked from the head. */
  *olderThan(cutoff: number): Generator<T> {
    for (const bucket of this.buckets) {
      if (bucket.live === 0) continue;
      for (let entry = bucket.first(); entry !== null && entry.queuedAt < cutoff; entry = bucket.first()) {
        yield entry; // the caller takes it out of the queue (its state changes), so `first` moves on
      }
    }
  }
}
