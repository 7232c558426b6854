// The bits a proved-work challenge asks for (docs/rules.md#proved-work), from the pressure and recent work.
import { WORK_BITS_MAX } from './proved-work.ts';

/** How long the work of admitted attempts counts as "lately" for the bits asked, and pressure lasts after a shed. */
export const WORK_WINDOW_MS = 10_000;

/**
 * Follows the shared lane's sheds and grants: pressure is a shed in the last WORK_WINDOW_MS, and the
 * least work granted a check is kept over two half-windows, so it follows the flood both ways.
 */
export class AskedBits {
  private lastShedAt = Number.NEGATIVE_INFINITY;
  private windowStart = Number.NEGATIVE_INFINITY;
  private leastNow = Number.POSITIVE_INFINITY;
  private leastBefore = Number.POSITIVE_INFINITY;

  /** An attempt was shed at `now`. */
  shed(now: number): void {
    this.lastShedAt = now;
  }

  /** A shared attempt that proved `work` bits got a check at `now`. */
  granted(work: number, now: number): void {
    this.roll(now);
    this.leastNow = Math.min(this.leastNow, work);
  }

  /** The bits to ask at `now`: 0 without pressure, else the least work granted lately plus one. */
  at(now: number): number {
    if (now - this.lastShedAt > WORK_WINDOW_MS) return 0;
    this.roll(now);
    const least = Math.min(this.leastNow, this.leastBefore);
    return Math.min(WORK_BITS_MAX, (Number.isFinite(least) ? least : 0) + 1);
  }

  /** Moves the half-windows of granted work along: each lasts WORK_WINDOW_MS / 2. */
  private roll(now: number): void {
    const half = WORK_WINDOW_MS / 2;
    if (now - this.windowStart < half) return;
    this.leastBefore = now - this.windowStart < 2 * half ? this.leastNow : Number.POSITIVE_INFINITY;
    this.leastNow = Number.POSITIVE_INFINITY;
    this.windowStart = now;
  }
}
