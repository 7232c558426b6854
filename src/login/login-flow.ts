// The login-failure limiter, whole: the early looks, the reservation before the check, the settlement.
import { normaliseEmail } from '../email.ts';
import { type RateLimitEngine, then, type Verdict } from '../rate-limit/engine.ts';
import { type Caller, type ControlName, callerWith, keyFor } from '../rate-limit/policy.ts';
import type { MaybePromise } from '../rate-limit/stores/store.ts';
import type { SecurityEventSink } from '../security-event.ts';

export type LoginAttempt =
  | { readonly refused: Verdict }
  | {
      readonly refused: null;
      /** Reports the credential check's outcome: a failure keeps the reserved units, a success returns them. */
      settle(succeeded: boolean): Promise<void>;
      /** The check never ran (the attempt was shed): gives every reserved unit back, counts nothing, locks nothing. */
      release(): Promise<void>;
    };

/** An attempt whose units are reserved: it settles or releases them. */
export type LoginReservation = Extract<LoginAttempt, { readonly refused: null }>;

export interface LoginFlowOptions {
  readonly engine: RateLimitEngine;
  /**
   * The policy's login plan: the controls of a known-device attempt and of every other one, in
   * order, and those a failure also counts against without their refusing the attempt.
   */
  readonly plan: {
    readonly unknownDevice: readonly ControlName[];
    readonly knownDevice: readonly ControlName[];
    readonly failuresAlsoCount?: readonly ControlName[];
  };
  /** Told when a lock starts, once per lock (docs/rules.md#known-devices). */
  readonly events: SecurityEventSink;
  /**
   * Whether a request's device cookie may make it a known-device attempt (its signature holds).
   * Such an attempt is not refused by the address or the account before the attempt itself, which
   * alone can tell whether the cookie belongs to the account the body names.
   */
  readonly mayBeKnownDevice: (deviceCookie: string | undefined) => boolean;
}

interface Reservation {
  readonly name: ControlName;
  readonly key: string;
  readonly verdict: Verdict;
}

export class LoginFlow {
  private readonly engine: RateLimitEngine;
  private readonly plan: LoginFlowOptions['plan'];
  private readonly events: SecurityEventSink;
  private readonly mayBeKnownDevice: (deviceCookie: string | undefined) => boolean;

  constructor(options: LoginFlowOptions) {
    this.engine = options.engine;
    this.plan = options.plan;
    this.events = options.events;
    this.mayBeKnownDevice = options.mayBeKnownDevice;
  }

  /**
   * The look before the body is read: the address's lock, spending nothing. A refusal is not
   * answered yet but kept for `afterBody` (the 429 covers the account's lock too), or answered in
   * place of an error the body raises. Null when nothing refuses, or when the request may be a
   * known-device attempt of a plan that has them (its controls are the device's alone). A plan
   * without known-device controls (the passkey sign-in) looks whatever cookie comes.
   */
  beforeBody(caller: Caller, deviceCookie: string | undefined): MaybePromise<Verdict | null> {
    if (this.plan.knownDevice.length > 0 && this.mayBeKnownDevice(deviceCookie)) return null;
    return this.lockedBefore(caller, 'ip');
  }

  /**
   * The look once the body is parsed, before CSRF and field validation: the account's lock, now
   * that the body names it, and of it and the address's (`address`, from `beforeBody`) the one
   * that ends last, so that a client that waits its Retry-After is not refused again by the other.
   * A body that names no email, or a request that may be a known device, keeps the address's.
   */
  afterBody(
    caller: Caller,
    email: unknown,
    deviceCookie: string | undefined,
    address: Verdict | null,
  ): MaybePromise<Verdict | null> {
    if (typeof email !== 'string' || this.mayBeKnownDevice(deviceCookie)) return address;
    return then(this.lockedBefore(caller, 'account', email), (account) => longestRefusal(address, account));
  }

  /**
   * A look, spending nothing, at whether the unknown-device control keyed by `keyKind` refuses:
   * the address before the body is read, the account once it is, so a locked caller gets its 429
   * before CSRF and field validation, as for every other limiter. Null when nothing refuses (or
   * only in shadow mode). The caller decides whether the attempt can be a known-device one; if so
   * it does not ask, since those controls may not refuse it.
   */
  private lockedBefore(caller: Caller, keyKind: 'ip' | 'account', email = ''): MaybePromise<Verdict | null> {
    const { engine } = this;
    const name = this.plan.unknownDevice.find((control) => engine.controls[control].control.key === keyKind);
    if (!name) return null;
    const key = keyFor(engine.controls[name].control, callerWith(caller, { account: normaliseEmail(email) }));
    if (key === null) return null; // the address of a trusted network: no per-address control
    return then(engine.peek(name, key), (verdict) => (verdict.refused ? verdict : null));
  }

  /**
   * Reserves one unit of each control's failure budget before the password is checked: the
   * device's alone for a known-device attempt (`deviceId` set: a valid device cookie for the
   * account `email` names), else the address's and the account's. A reservation is an admission
   * recorded in the store, so N parallel attempts can never all see "9 of 10 used" and then all
   * fail: at most the budget's worth are ever in flight or counted. On success the account's and
   * the device's counters are cleared and the address's unit is released by its token (that exact
   * admission, not "one less somewhere"); a failure keeps them, and if its unit was the last one
   * of a budget, a lock starts. `email` is null when the attempt names no account (a passkey
   * sign-in whose credential is unknown): then only the address counts.
   */
  async attempt(caller: Caller, email: string | null, deviceId: string | null): Promise<LoginAttempt> {
    const { engine } = this;
    const account = email === null ? null : normaliseEmail(email);
    const subject = callerWith(caller, { account, deviceId });
    const reserved: Reservation[] = [];
    const releaseAll = () => Promise.all(reserved.map((r) => this.release(r)));
    for (const name of deviceId === null ? this.plan.unknownDevice : this.plan.knownDevice) {
      // No account (a passkey nobody registered): only the controls with a key of this caller.
      const key = keyFor(engine.controls[name].control, subject);
      if (key === null) continue;
      const verdict = await engine.consume(name, key);
      if (verdict.refused) {
        const refused = await this.longestWith(verdict, subject, name, deviceId === null);
        // A refused login is not a failure: give back what this attempt took. Nor is it an event:
        // the lock was written once when it started (lockIfFilled), not once per refusal after it.
        await releaseAll();
        return { refused };
      }
      reserved.push({ name, key, verdict });
    }
    return {
      refused: null,
      release: async () => {
        await releaseAll();
      },
      settle: async (succeeded) => {
        if (succeeded) {
          await Promise.all(
            reserved.map((r) =>
              engine.controls[r.name].control.key === 'ip' ? this.release(r) : engine.reset(r.name, r.key),
            ),
          );
          return;
        }
        await Promise.all([
          ...reserved.map((r) => this.lockIfFilled(r, account)),
          ...(deviceId === null ? this.countFailure(subject, account) : []),
        ]);
      },
    };
  }

  /**
   * A failure counted against the plan's `failuresAlsoCount` controls (a passkey's against its
   * account's password sign-ins): nothing was reserved there and nothing is refused by them, so
   * the failure is recorded now; one that fills the budget starts its lock. A budget already spent
   * records nothing more: that lock has started already.
   */
  private countFailure(subject: Caller, account: string | null): Promise<void>[] {
    const counted: Promise<void>[] = [];
    for (const name of this.plan.failuresAlsoCount ?? []) {
      const key = keyFor(this.engine.controls[name].control, subject);
      if (key === null) continue;
      counted.push(
        Promise.resolve(this.engine.consume(name, key)).then((verdict) =>
          verdict.refused ? undefined : this.lockIfFilled({ name, key, verdict }, account),
        ),
      );
    }
    return counted;
  }

  /**
   * The refusal to answer when `refused` (by control `name`) refuses: the one whose wait ends last
   * among it and the plan's controls after it, looked at without spending (docs/rules.md#known-devices: a client
   * that waits a login 429's Retry-After is not refused again by another login control).
   */
  private async longestWith(refused: Verdict, subject: Caller, name: ControlName, unknownDevice: boolean) {
    const plan = unknownDevice ? this.plan.unknownDevice : this.plan.knownDevice;
    let longest = refused;
    for (const next of plan.slice(plan.indexOf(name) + 1)) {
      const key = keyFor(this.engine.controls[next].control, subject);
      if (key !== null) longest = longestRefusal(longest, await this.engine.peek(next, key))!;
    }
    return longest;
  }

  /**
   * The 429 of an attempt the login gate refused because its account already has as many attempts
   * waiting in its lane as it may (docs/rules.md#the-login-gate): under the code and budget of the
   * lane's per-account control (`login-device` for a known device, `login-account` otherwise),
   * nothing admitted right now, and the gate's wait as the reset. Nothing is reserved, counted or
   * locked: the attempt never reached the failure budgets.
   */
  backlogFull(retryAfterSeconds: number, knownDevice = true): Verdict {
    const { engine } = this;
    const name = knownDevice
      ? this.plan.knownDevice[0]!
      : this.plan.unknownDevice.find((control) => engine.controls[control].control.key === 'account')!;
    const bound = engine.controls[name];
    const decision = {
      allowed: false,
      limit: bound.rule.limit,
      remaining: 0,
      resetMs: retryAfterSeconds * 1000,
    };
    return { bound, decision, refused: true };
  }

  /**
   * A failure that took the last unit of an enforced budget starts a lock: exactly one failure does
   * per lock (the one whose reservation filled it), so the index entry and the event are written
   * once per lock, however many refusals follow.
   */
  private async lockIfFilled(r: Reservation, account: string | null): Promise<void> {
    const { bound, decision } = r.verdict;
    if (bound.mode !== 'enforce' || decision.token === undefined || decision.remaining > 0) return;
    await this.engine.noteLock(r.name, r.key, decision.resetMs);
    this.reportLock(r.name, r.key, account);
  }

  private reportLock(name: ControlName, key: string, account: string | null): void {
    const byAddress = this.engine.controls[name].control.key === 'ip';
    this.events.record({
      type: 'lock-started',
      control: name,
      email: byAddress ? null : account,
      address: byAddress ? key : null,
    });
  }

  /** Gives back a reservation; one a shadow-mode control let through without recording has nothing to give. */
  private release({ name, key, verdict }: Reservation): MaybePromise<void> {
    const token = verdict.decision.token;
    return token === undefined ? undefined : this.engine.release(name, key, token);
  }
}

/**
 * Of two looks at login controls, the refusal that ends last (null if neither refuses): a login
 * 429 reports that control's headers and wait, so its Retry-After covers every control refusing.
 */
export function longestRefusal(a: Verdict | null, b: Verdict | null): Verdict | null {
  const refusing = [a, b].filter((v): v is Verdict => v?.refused === true);
  if (refusing.length < 2) return refusing[0] ?? null;
  return refusing[1]!.decision.resetMs > refusing[0]!.decision.resetMs ? refusing[1]! : refusing[0]!;
}
