// Proved-work challenges (contract §15): self-verifying, bound to an email, valid 2 minutes, usable once across the fleet.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { tokensEqual } from '../auth/tokens.ts';
import type { Clock } from '../clock.ts';
import { normaliseEmail } from '../email.ts';
import { leadingZeroBits, WORK_CHALLENGE_TTL_MS, workMessage } from './proved-work.ts';

/** What a login body may carry beside email and password (its shape checked by the route's schema). */
export interface WorkSolution {
  readonly challenge: string;
  readonly nonce: string;
}

/** Why a solution counted as no work: never an error to the caller, only a number on /metrics. */
export type WorkRefusal = 'forged' | 'expired' | 'no-work' | 'reused' | 'store-unavailable';
export const WORK_REFUSALS: readonly WorkRefusal[] = [
  'forged',
  'expired',
  'no-work',
  'reused',
  'store-unavailable',
];

/**
 * Where a challenge's id is claimed: the rate-limit store, shared by the fleet (Redis) or this
 * instance's memory. True only for the first claim of an id within `ttlMs`.
 */
export interface OnceClaims {
  claimOnce(scope: string, key: string, ttlMs: number): boolean | Promise<boolean>;
}

export interface WorkChallengesOptions {
  /** SESSION_SECRET: a key for challenges alone is derived from it. */
  readonly secret: string;
  readonly clock: Clock;
  readonly claims: OnceClaims;
}

/** The scope of the store under which challenge ids are claimed. */
export const WORK_CLAIM_SCOPE = 'login-work';

const VERSION = 'w1';
/** `w1.<expiry, base36 ms>.<id, 128 bits>.<MAC, 128 bits>`: the whole challenge is ASCII. */
const CHALLENGE_PATTERN = /^w1\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;

/**
 * Issues and checks challenges without keeping any state for them: a challenge carries its expiry
 * and a random id, signed with the email it is for. Checking one costs an HMAC, one SHA-256 and,
 * only when it proves some work, one claim of its id in the shared store, so a replay on any
 * instance finds the id taken. Nothing about the account is looked up: known and unknown accounts
 * are treated alike.
 */
export class WorkChallenges {
  private readonly key: Buffer;
  private readonly clock: Clock;
  private readonly claims: OnceClaims;
  private readonly observers = new Set<(reason: WorkRefusal) => void>();

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
    const expires = (this.clock.now() + WORK_CHALLENGE_TTL_MS).toString(36);
    const id = randomBytes(16).toString('base64url');
    return `${VERSION}.${expires}.${id}.${this.mac(expires, id, normaliseEmail(email))}`;
  }

  /**
   * The work `solution` proves for a login to `email`: the zero bits its hash starts with, or 0
   * when it is forged, issued for another email, expired, proves nothing, or was used before (or
   * the store cannot say that it was not). Never rejects.
   */
  async prove(email: string, solution: WorkSolution | undefined): Promise<number> {
    if (!solution) return 0;
    const match = CHALLENGE_PATTERN.exec(solution.challenge);
    if (!match || !tokensEqual(match[3]!, this.mac(match[1]!, match[2]!, normaliseEmail(email))))
      return this.refuse('forged');
    const ttlMs = Number.parseInt(match[1]!, 36) - this.clock.now();
    if (!(ttlMs > 0)) return this.refuse('expired');
    const digest = createHash('sha256').update(workMessage(solution.challenge, solution.nonce)).digest();
    const bits = leadingZeroBits(digest);
    if (bits === 0) return this.refuse('no-work');
    let claimed: boolean;
    try {
      claimed = await this.claims.claimOnce(WORK_CLAIM_SCOPE, match[2]!, ttlMs);
    } catch {
      // The store is away: no work can be counted safely, and a sign-in never fails for it.
      return this.refuse('store-unavailable');
    }
    return claimed ? bits : this.refuse('reused');
  }

  private mac(expires: string, id: string, email: string): string {
    return createHmac('sha256', this.key)
      .update(`${expires}\0${id}\0${email}`)
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
