// A passkey sign-in from the signed answer to its outcome (docs/rules.md#passkeys).
import type { AuthenticationResponseJSON, PasskeyCeremonies, RelyingParty } from '../auth/passkeys.ts';
import type { Clock } from '../clock.ts';
import type { PasskeysRepository, StoredCredential } from '../db/repositories/passkeys.ts';
import { accountMaySignIn } from '../db/repositories/users.ts';
import { normaliseEmail } from '../email.ts';
import type { Caller } from '../rate-limit/policy.ts';
import type { SecurityEventSink } from '../security-event.ts';
import type { LoginFlow } from './login-flow.ts';
import type { PasskeyLoginOutcome } from './outcome.ts';

/** What a passkey sign-in brings: the browser's signed answer, what its challenge is bound to, and who sends it. */
export interface PasskeyAttempt {
  readonly response: AuthenticationResponseJSON;
  /** What the challenge was bound to when issued: the caller's session, else its pre-session cookie. */
  readonly binding: string;
  /** The relying party the request speaks to (the service's own origin); null when it names no usable host. */
  readonly relyingParty: RelyingParty | null;
  /** The caller as the rate limiter keys it (its address). */
  readonly caller: Caller;
}

/** What attemptPasskeyLogin runs over; app.ts builds them once (src/login/login.ts). */
export interface PasskeyLoginServices {
  /** The failure budgets of the passkey sign-in's plan (no known-device controls). */
  readonly flow: LoginFlow;
  readonly passkeys: Pick<PasskeysRepository, 'findCredential' | 'recordUse'>;
  readonly ceremonies: Pick<PasskeyCeremonies, 'takeSignInChallenge' | 'verifyAssertion'>;
  /** Where a cloned authenticator is recorded (`passkey-counter-refused`). */
  readonly events: SecurityEventSink;
  readonly clock: Clock;
}

/**
 * Signs in with a passkey, or says why not (docs/rules.md#passkeys); it never enters the login gate.
 * Its order, pinned by test/unit/attempt-login.test.ts: the challenge is taken first (spent even by
 * an answer that then fails); the credential is looked up and the address's unit reserved, so a
 * refusal comes before any verification; the answer is verified, the counter last, written only if
 * the stored one is still the one checked; then the reservation is settled (a check that could not
 * run, the database away, gives the units back and throws).
 */
export async function attemptPasskeyLogin(
  services: PasskeyLoginServices,
  attempt: PasskeyAttempt,
): Promise<PasskeyLoginOutcome> {
  const { flow, passkeys, ceremonies } = services;
  const { response, caller } = attempt;
  const challenge = await ceremonies.takeSignInChallenge(response, attempt.binding);
  const stored = await passkeys.findCredential(response.id);
  // A failure counts against the account only when the credential names one, and only when the
  // challenge was still held: a challenge the service no longer holds (expired, replaced by a
  // newer one of this browser, never issued) is the service's loss, not the account's failure.
  // The account's budget never refuses a passkey (docs/rules.md#passkeys); the address's does.
  const account = challenge !== null && stored !== null ? stored.user.email : null;
  const reservation = await flow.attempt(caller, account, null);
  if (reservation.refused) return { kind: 'refused', refusal: reservation.refused };
  let ok: boolean;
  try {
    ok = challenge !== null && stored !== null && (await verify(services, attempt, challenge, stored));
  } catch (error) {
    await reservation.release(); // the check could not run: not a failed login
    throw error;
  }
  await reservation.settle(ok);
  // Accounts (docs/rules.md#accounts): a failure against an existing account is in its owner's events.
  if (!ok && stored !== null)
    services.events.record({
      type: 'sign-in-failed',
      control: 'passkey',
      email: normaliseEmail(stored.user.email),
      address: caller.ipKey(),
    });
  return ok && stored ? { kind: 'signed-in', user: stored.user, verifiedHash: null } : { kind: 'invalid' };
}

/**
 * Whether the answer signs in as the stored credential's account: the signature, origin, RP ID,
 * user verification and a counter that moves forward, recorded at once. A counter that went
 * back (a cloned authenticator) is refused and written as a security event.
 */
async function verify(
  { ceremonies, passkeys, events, clock }: PasskeyLoginServices,
  { response, relyingParty, caller }: PasskeyAttempt,
  challenge: string,
  stored: StoredCredential,
): Promise<boolean> {
  if (relyingParty === null) return false;
  const outcome = await ceremonies.verifyAssertion(relyingParty, response, challenge, stored);
  // A disabled account signs in by no means: refused after the same check, as the same failure.
  if (outcome.ok)
    return (
      accountMaySignIn(stored) && passkeys.recordUse(stored.id, stored.counter, outcome.counter, clock.now())
    );
  if (outcome.cloned)
    events.record({
      type: 'passkey-counter-refused',
      control: 'passkey',
      email: normaliseEmail(stored.user.email),
      address: caller.ipKey(),
    });
  return false;
}
