// A password sign-in from what the request brought to its outcome (docs/rules.md#the-login-gate).
import { DeviceCookies } from '../auth/devices.ts';
import type { PasswordChecker } from '../auth/passwords.ts';
import type { Clock } from '../clock.ts';
import {
  accountMaySignIn,
  type Credentials,
  passwordUsable,
  type UsersRepository,
} from '../db/repositories/users.ts';
import { normaliseEmail } from '../email.ts';
import type { Caller } from '../rate-limit/policy.ts';
import type { SecurityEventSink } from '../security-event.ts';
import type { LoginFlow, LoginReservation } from './login-flow.ts';
import type { GatePlace, LoginGate, Ticket } from './login-gate.ts';
import type { LoginOutcome, WorkChallenge } from './outcome.ts';
import type { WorkChallenges, WorkSolution } from './work-challenges.ts';

/** What a password sign-in brings: the body's fields, its device cookie, and who sends it. */
export interface PasswordAttempt {
  readonly email: string;
  readonly password: string;
  /** A solved challenge of an earlier LOGIN_BUSY, if the client sent one. */
  readonly work?: WorkSolution;
  /** The device cookie the request carried (`tp_device`), if any. */
  readonly deviceCookie: string | undefined;
  /** The caller as the rate limiter keys it (its address). */
  readonly caller: Caller;
}

/** What attemptLogin runs over; app.ts builds them once (src/login/login.ts). */
export interface PasswordLoginServices {
  readonly gate: LoginGate;
  readonly challenges: WorkChallenges;
  /** The failure budgets of the password sign-in's plan. */
  readonly flow: LoginFlow;
  readonly accounts: Pick<UsersRepository, 'findCredentials' | 'updatePasswordHash'>;
  readonly passwords: Pick<PasswordChecker, 'check' | 'needsRehash' | 'rehash'>;
  readonly devices: Pick<DeviceCookies, 'read'>;
  /** Accounts (docs/rules.md#accounts): where a failure against an existing account is recorded. */
  readonly events: SecurityEventSink;
  /** Accounts: the time a temporary password is judged expired at. */
  readonly clock: Clock;
}

/** What the attempt's slot at the gate ended with. */
type OnSlot =
  | LoginOutcome
  | { readonly kind: 'shed'; readonly retryAfter: number }
  | {
      readonly kind: 'checked';
      readonly reservation: LoginReservation;
      /** The account the email names, if any, whatever the check found. */
      readonly credentials: Credentials | null;
      /** The account, when the password matched one that may sign in. */
      readonly account: Credentials | null;
      /** A new hash of the password at today's cost, when the stored one was made at another. */
      readonly rehashed: string | null;
    };

/**
 * Signs in with a password, or says why not (docs/rules.md#the-login-gate). The order carries the
 * defence, each step pinned by test/unit/attempt-login.test.ts: a valid device cookie for the
 * account picks the known lane (the account is looked up first only then), else the proved work
 * places it in the shared lane; the gate decides a shed before any look-up, so a shed cannot tell
 * whether the account exists; admitted, the attempt reserves its failure units while it waits
 * (LoginFlow.attempt) and gives them back if shed at its deadline; it holds its slot only for its
 * checks and settles the reservation after freeing it. The locks were looked at before the body
 * was validated (LoginFlow.beforeBody and afterBody, from the route's own hooks).
 */
export async function attemptLogin(
  services: PasswordLoginServices,
  attempt: PasswordAttempt,
): Promise<LoginOutcome> {
  const { gate, accounts, devices } = services;
  const { email } = attempt;
  const claim = devices.read(attempt.deviceCookie);
  // Accounts: a cookie is known only while its device row stands (its owner may forget it).
  const looked = claim === null ? null : await accounts.findCredentials(email, claim);
  const known =
    looked !== null && DeviceCookies.known(claim, { ...looked, userId: looked.user.id })
      ? { account: looked, deviceId: claim!.deviceId }
      : null;
  const place: GatePlace = known
    ? { lane: 'known', account: String(known.account.user.id) }
    : {
        lane: 'shared',
        work: await services.challenges.prove(email, attempt.work, gate.askedBits()),
        account: normaliseEmail(email),
      };
  const admission = gate.enter(place);
  if (admission.shed) return busy(services, email, await gate.hold());
  if (admission.ticket === null) {
    // The account has as many known-device attempts waiting as it may: refused before any check
    // or count, and held like a shed, so that an insider's loop of them costs nothing.
    await gate.hold();
    return { kind: 'refused', refusal: services.flow.backlogFull(admission.retryAfter, known !== null) };
  }
  const slot = await onSlot(admission.ticket, (ticket) =>
    check(services, attempt, ticket, looked, known?.deviceId ?? null),
  );
  switch (slot.kind) {
    case 'shed':
      return busy(services, email, slot.retryAfter);
    case 'checked': {
      await slot.reservation.settle(slot.account !== null);
      // Accounts: a failure against an existing account is in its owner's security events.
      if (slot.account === null && slot.credentials !== null)
        services.events.record({
          type: 'sign-in-failed',
          control: 'password',
          email: normaliseEmail(slot.credentials.user.email),
          address: attempt.caller.ipKey(),
        });
      if (slot.account === null) return INVALID;
      if (slot.rehashed !== null)
        await accounts.updatePasswordHash(slot.account.user.id, slot.rehashed, slot.account.passwordHash);
      return {
        kind: 'signed-in',
        user: slot.account.user,
        verifiedHash: slot.rehashed ?? slot.account.passwordHash,
      };
    }
    default:
      return slot;
  }
}

const INVALID: LoginOutcome = Object.freeze({ kind: 'invalid' });

/** Runs `use` on an admitted attempt's ticket and closes it when `use` ends, however it ends. */
async function onSlot<T>(ticket: Ticket, use: (ticket: Ticket) => Promise<T>): Promise<T> {
  try {
    return await use(ticket);
  } finally {
    ticket.close();
  }
}

/** Steps 4 to 6: the reservation while the attempt waits, its turn, the checks on its slot. */
async function check(
  { accounts, flow, passwords, clock }: PasswordLoginServices,
  { email, password, caller }: PasswordAttempt,
  ticket: Ticket,
  looked: Credentials | null,
  deviceId: string | null,
): Promise<OnSlot> {
  const credentials = looked ?? (await accounts.findCredentials(email));
  const reservation = await flow.attempt(caller, email, deviceId);
  if (reservation.refused) return { kind: 'refused', refusal: reservation.refused };
  const turn = await ticket.turn;
  if (turn.shed) {
    // It waited its bound without a check: not a failure, so whatever it reserved goes back.
    await reservation.release();
    return { kind: 'shed', retryAfter: turn.retryAfter };
  }
  const matches = await ticket.run(() =>
    passwords.check(password, credentials?.passwordHash ?? null, normaliseEmail(email)),
  );
  // A disabled account is refused after the same check, and counted as the same failure: its
  // answer tells nothing a wrong password would not.
  // Accounts: a temporary password past its 7 days signs in as a wrong one would, after the same check.
  const account =
    matches &&
    credentials !== null &&
    accountMaySignIn(credentials) &&
    passwordUsable(credentials, clock.now())
      ? credentials
      : null;
  // Hashes made at an older cost are redone now, on the same slot: a wrong password for such an
  // account would otherwise answer faster than an unknown email (checked at today's cost).
  const rehashed =
    account !== null && passwords.needsRehash(account.passwordHash)
      ? await ticket.run(() => passwords.rehash(password))
      : null;
  return { kind: 'checked', reservation, credentials, account, rehashed };
}

/** LOGIN_BUSY for a shared-lane attempt: under pressure with a challenge for its email (docs/rules.md#proved-work). */
function busy({ gate, challenges }: PasswordLoginServices, email: string, retryAfter: number): LoginOutcome {
  const bits = gate.askedBits();
  const work: WorkChallenge | null = bits > 0 ? { challenge: challenges.issue(email), bits } : null;
  return { kind: 'busy', retryAfter, work };
}
