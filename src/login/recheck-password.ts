// One's current password checked again before it is changed (docs/rules.md#accounts).
import type { PasswordChecker } from '../auth/passwords.ts';
import type { Clock } from '../clock.ts';
import { passwordUsable, type UsersRepository } from '../db/repositories/users.ts';
import { normaliseEmail } from '../email.ts';
import type { Verdict } from '../rate-limit/engine.ts';
import type { Caller } from '../rate-limit/policy.ts';
import type { SecurityEventSink } from '../security-event.ts';
import type { LoginFlow } from './login-flow.ts';
import type { LoginGate } from './login-gate.ts';

/** What recheckPassword runs over; app.ts builds them once (src/login/login.ts). */
export interface PasswordRecheckServices {
  readonly gate: LoginGate;
  /** The password change's failure budgets: the account's and the address's, as a sign-in's. */
  readonly flow: LoginFlow;
  readonly accounts: Pick<UsersRepository, 'passwordOf'>;
  readonly passwords: Pick<PasswordChecker, 'check'>;
  /** Where a wrong current password is recorded (`sign-in-failed`, control `password-change`). */
  readonly events: SecurityEventSink;
  readonly clock: Clock;
}

export interface PasswordRecheck {
  readonly userId: number;
  readonly email: string;
  readonly password: string;
  /** The caller as the rate limiter keys it (its address). */
  readonly caller: Caller;
}

/**
 * - `confirmed`: the password is the account's current one (a temporary one only while it signs in),
 *   with the hash it was checked against (the change is written only while the account still has it);
 * - `refused`: a login control refuses (429), before any check; nothing was counted;
 * - `busy`: the account has as many checks waiting at the gate as it may (503 LOGIN_BUSY, held);
 * - `invalid`: not the current password (422 CURRENT_PASSWORD_INVALID); counted as a failed login.
 */
export type RecheckOutcome =
  | { readonly kind: 'confirmed'; readonly verifiedHash: string }
  | { readonly kind: 'refused'; readonly refusal: Verdict }
  | { readonly kind: 'busy'; readonly retryAfter: number }
  | { readonly kind: 'invalid' };

/**
 * Checks a signed-in caller's current password as a sign-in checks one (attemptLogin's pieces):
 * the caller waits in the gate's known lane under its account (a signed-in session is proof
 * enough that it is no flood's; the account's backlog is bounded as a known device's is), reserves
 * the account's and the address's failure units while it waits (a refusal answers before any
 * check), runs the check on its slot, frees the slot, and settles: a failure keeps its units and
 * may start a lock, a success clears the account's count.
 */
export async function recheckPassword(
  services: PasswordRecheckServices,
  attempt: PasswordRecheck,
): Promise<RecheckOutcome> {
  const { gate, flow, accounts, passwords, clock } = services;
  const admission = gate.enter({ lane: 'known', account: String(attempt.userId) });
  if (admission.shed || admission.ticket === null) return { kind: 'busy', retryAfter: await gate.hold() };
  const { ticket } = admission;
  let confirmed: string | null;
  let reservation: Awaited<ReturnType<LoginFlow['attempt']>>;
  try {
    reservation = await flow.attempt(attempt.caller, attempt.email, null);
    if (reservation.refused) return { kind: 'refused', refusal: reservation.refused };
    try {
      await ticket.turn; // the known lane is never shed once admitted
      const stored = await accounts.passwordOf(attempt.userId);
      const matches = await ticket.run(() => passwords.check(attempt.password, stored?.passwordHash ?? null));
      confirmed =
        matches && stored !== null && passwordUsable({ passwordExpiresAt: stored.expiresAt }, clock.now())
          ? stored.passwordHash
          : null;
    } catch (error) {
      await reservation.release(); // the check could not run (the database away): not a failure
      throw error;
    }
  } finally {
    ticket.close();
  }
  await reservation.settle(confirmed !== null);
  if (confirmed !== null) return { kind: 'confirmed', verifiedHash: confirmed };
  services.events.record({
    type: 'sign-in-failed',
    control: 'password-change',
    email: normaliseEmail(attempt.email),
    address: attempt.caller.ipKey(),
  });
  return { kind: 'invalid' };
}
