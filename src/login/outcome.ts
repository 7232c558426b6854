// What a sign-in comes to, for the routes to answer: signed in, refused, busy, or invalid.
import type { User } from '../db/repositories/users.ts';
import type { Verdict } from '../rate-limit/engine.ts';

/** A LOGIN_BUSY's challenge: solve it and send the solution with the next attempt (docs/rules.md#proved-work). */
export interface WorkChallenge {
  readonly challenge: string;
  readonly bits: number;
}

/**
 * The outcome of a sign-in attempt (a password's or a passkey's):
 * - `signed-in`: the credential holds for an account that may sign in; the route makes its session,
 *   for a password only while the account still has `verifiedHash` (the hash it holds after this
 *   sign-in's own rehash): a reset or a change that landed during the check wins.
 * - `refused`: a login control refuses (429): the verdict names the control (its code and
 *   `RateLimit` headers) and its decision (the wait, hence `Retry-After`). Nothing was counted.
 * - `busy`: the gate shed the attempt (503 LOGIN_BUSY): come back in `retryAfter` seconds, with
 *   `work` solved while the gate asks for some (password sign-ins only; a passkey is never shed).
 * - `invalid`: wrong, unknown or disabled, all alike (401 INVALID_CREDENTIALS); counted as a failure.
 */
export type LoginOutcome =
  | { readonly kind: 'signed-in'; readonly user: User; readonly verifiedHash: string | null }
  | { readonly kind: 'refused'; readonly refusal: Verdict }
  | { readonly kind: 'busy'; readonly retryAfter: number; readonly work: WorkChallenge | null }
  | { readonly kind: 'invalid' };

/** A passkey sign-in's outcome: never `busy`, since a passkey never waits at the gate. */
export type PasskeyLoginOutcome = Exclude<LoginOutcome, { readonly kind: 'busy' }>;
