// Proved-work challenges (docs/rules.md#proved-work): self-verifying, bound to an email, used once.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { tokensEqual } from '../auth/tokens.ts';
import type { Clock } from '../clock.ts';
import { normaliseEmail } from '../email.ts';
import { WORK_SERIES_SLOTS } from '../limits.ts';
import { leadingZeroBits, WORK_CHALLENGE_TTL_MS, workMessage } from './proved-work.ts';

/** What a login body may carry beside email and password (its shape checked by the route's schema). */
export interface WorkSolution {
  readonly challenge: string;
  readonly nonce: string;
}

/** Why a solution counted as no work: never an error to the caller, only a number on /metrics. */
export type WorkRefusal = 'forged' | 'expired' | 'no-work' | 'below-asked' | 'reused' | 'store-unavailable';
export const WORK_REFUSALS: readonly WorkRefusal[] = [
  'forged',
  'expired',
  'no-work',
  'below-asked',
  'reused',
  'store-unavailable',
];

/**
 * Where a challenge's slot is claimed: the rate-limit store, shared by the fleet (Redis) or this
 * instance's memory, one bit per slot of a series. True only for the first claim of a slot while
 * its series is kept (at least `ttlMs`).
 */
export interface OnceClaims {
  claimOnce(scope: string, series: string, slot: number, ttlMs: number): boolean | Promise<boolean>;
}

export interface WorkChallengesOptions {
  /** SESSION_SECRET: a key for challenges alone is derived from it. */
  readonly secret: string;
  readonly clock: Clock;
  readonly claims: OnceClaims;
}

/** The scope of the store under which challenge ids are claimed. */
export const WORK_CLAIM_SCOPE = 'login-work';

const VERSION = 'w2';
/**
 * `w2.<expiry, base36 ms>.<series, 96 bits>.<slot, base36>.<MAC, 128 bits>`: the whole challenge
 * is ASCII. The series and the slot are where its claim is recorded.
 */
const CHALLENGE_PATTERN = /^w2\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{16})\.([0-9a-z]{1,5})\.([A-Za-z0-9_-]{22})$/;

/**
 * A series lasts at most this long (or WORK_SERIES_SLOTS challenges): its challenges then all end
 * within this much of one another, so a claim keeps its series' record this much past its own end.
 */
const SERIES_MS = 10_000;

/**
 * Issues and checks challenges without storing anything for them: a challenge carries its expiry,
 * a random series and its slot in it (a counter), signed with the email it is for. Checking one
 * costs an HMAC, one SHA-256 and, only when it proves the bits asked, one claim of its slot in the
 * shared store, so a replay on any instance finds the slot taken. The record is a bit per slot
 * issued, so no number of solutions, weak or strong, can fill it so that another challenge's claim
 * fails (docs/rules.md#proved-work). Nothing about the account is looked up: known and unknown
 * accounts are treated alike.
 */
export class WorkChallenges {
  private readonly key: Buffer;
  private readonly clock: Clock;
  private readonly claims: OnceClaims;
  private readonly observers = new Set<(reason: WorkRefusal) => void>();
  /** The series challenges are issued in now, when it began, and its next slot. */
  private series = '';
  private seriesStartedAt = Number.NEGATIVE_INFINITY;
  private nextSlot = 0;

  constructor(options: WorkChallengesOptions) {
    // Its own key: no session, CSRF or device MAC can pass as a challenge's.
    this.key = createHmac('sha256', options.secret).update('tp-login-work').digest();
    this.clock = options.clock;
    this.claims = options.claims;
  }

  /** Tells `observer` of each solution that counts as no work, and why (metrics); returns the function that stops it. */
  observe(observer: (reason: WorkRefusal) => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** A fresh challenge for `email`, valid for WORK_CHALLENGE_TTL_MS from now. */
  issue(email: string): string {
    const now = this.clock.now();
    if (now - this.seriesStartedAt >= SERIES_MS || this.nextSlot >= WORK_SERIES_SLOTS) {
      this.series = randomBytes(12).toString('base64url');
      this.seriesStartedAt = now;
      this.nextSlot = 0;
    }
    const expires = (now + WORK_CHALLENGE_TTL_MS).toString(36);
    const slot = (this.nextSlot++).toString(36);
    return `${VERSION}.${expires}.${this.series}.${slot}.${this.mac(expires, this.series, slot, normaliseEmail(email))}`;
  }

  /**
   * The work `solution` proves for a login to `email`: the zero bits its hash starts with, or 0
   * when it is forged, issued for another email, expired, proves nothing, proves less than
   * `askedBits` (the bits asked when it arrives: such a solution is not recorded, so the same
   * challenge may still be solved as asked), or was used before (or the store cannot say that it
   * was not). Never rejects.
   */
  async prove(email: string, solution: WorkSolution | undefined, askedBits = 0): Promise<number> {
    if (!solution) return 0;
    const match = CHALLENGE_PATTERN.exec(solution.challenge);
    if (!match || !tokensEqual(match[4]!, this.mac(match[1]!, match[2]!, match[3]!, normaliseEmail(email))))
      return this.refuse('forged');
    const ttlMs = Number.parseInt(match[1]!, 36) - this.clock.now();
    if (!(ttlMs > 0)) return this.refuse('expired');
    const digest = createHash('sha256').update(workMessage(solution.challenge, solution.nonce)).digest();
    const bits = leadingZeroBits(digest);
    if (bits === 0) return this.refuse('no-work');
    if (bits < askedBits) return this.refuse('below-asked');
    let claimed: boolean;
    try {
      const slot = Number.parseInt(match[3]!, 36);
      // Kept until every challenge of the series has ended: they all end within SERIES_MS of this one.
      claimed = await this.claims.claimOnce(WORK_CLAIM_SCOPE, match[2]!, slot, ttlMs + SERIES_MS);
    } catch {
      // The store is away: no work can be counted safely, and a sign-in never fails for it.
      return this.refuse('store-unavailable');
    }
    return claimed ? bits : this.refuse('reused');
  }

  private mac(expires: string, series: string, slot: string, email: string): string {
    return createHmac('sha256', this.key)
      .update(`${expires}\0${series}\0${slot}\0${email}`)
      .digest()
      .subarray(0, 16)
      .toString('base64url');
  }

  private refuse(reason: WorkRefusal): 0 {
    for (const observer of this.observers) {
      try {
        observer(reason);
      } catch {
        // metrics never break a sign-in
      }
    }
    return 0;
  }
}
