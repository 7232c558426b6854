// The login-failure limiter, whole: the early looks, the reservation before the password check, the settlement after it.
import { normaliseEmail } from '../auth/email.ts';
import { type RateLimitEngine, then, type Verdict } from './engine.ts';
import { type Caller, type ControlName, keyFor } from './policy.ts';
import type { MaybePromise } from './stores/store.ts';

export type LoginAttempt =
  | { readonly refused: Verdict }
  | {
      readonly refused: null;
      /** Reports the credential check's outcome: a failure keeps the reserved units, a success returns them. */
      settle(succeeded: boolean): Promise<void>;
    };

/** The caller of a login, keyed by the account it names rather than by who is signed in. */
function loginCaller(caller: Caller, email: string): Caller {
  return { userId: null, account: normaliseEmail(email), ipKey: () => caller.ipKey() };
}

export class LoginFlow {
  private readonly engine: RateLimitEngine;
  /** The login-failure controls, in the order they are checked (policy's login plan). */
  private readonly controls: readonly ControlName[];

  constructor(engine: RateLimitEngine, controls: readonly ControlName[]) {
    this.engine = engine;
    this.controls = controls;
  }

  /**
   * A look, spending nothing, at whether the control keyed by `keyKind` refuses: the address before
   * the body is read, the account once it is, so a locked caller gets its 429 before CSRF and
   * field validation, as for every other limiter. Null when nothing refuses (or only in shadow).
   */
  lockedBefore(caller: Caller, keyKind: 'ip' | 'account', email = ''): MaybePromise<Verdict | null> {
    const name = this.controls.find((control) => this.engine.controls[control].control.key === keyKind);
    if (!name) return null;
    const key = keyFor(this.engine.controls[name].control, loginCaller(caller, email))!;
    return then(this.engine.peek(name, key), (verdict) => (verdict.refused ? verdict : null));
  }

  /**
   * Reserves one unit of each control's failure budget before the password is checked. A
   * reservation is an admission recorded in the store, so N parallel attempts can never all see
   * "9 of 10 used" and then all fail: at most the budget's worth are ever in flight or counted.
   * On success the account's counter is cleared and the other reserved units are released by
   * their tokens (that exact admission, not "one less somewhere"); a failure simply keeps them.
   */
  async attempt(caller: Caller, email: string): Promise<LoginAttempt> {
    const { engine } = this;
    const subject = loginCaller(caller, email);
    const reserved: { name: ControlName; key: string; token: number | undefined }[] = [];
    const releaseAll = () => Promise.all(reserved.map((r) => this.release(r.name, r.key, r.token)));
    for (const name of this.controls) {
      const key = keyFor(engine.controls[name].control, subject)!;
      const verdict = await engine.consume(name, key);
      if (verdict.refused) {
        await releaseAll(); // a refused login is not a failure: give back what this attempt took
        return { refused: verdict };
      }
      // In shadow mode a would-be refusal goes on without a reservation (no token): nothing to give back.
      reserved.push({ name, key, token: verdict.decision.token });
    }
    return {
      refused: null,
      settle: async (succeeded) => {
        if (!succeeded) return;
        await Promise.all(
          reserved.map((r) =>
            engine.controls[r.name].control.key === 'account'
              ? engine.reset(r.name, r.key)
              : this.release(r.name, r.key, r.token),
          ),
        );
      },
    };
  }

  private release(name: ControlName, key: string, token: number | undefined): MaybePromise<void> {
    return token === undefined ? undefined : this.engine.release(name, key, token);
  }
}
