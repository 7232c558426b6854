// The login-failure limiter: refuse before the password check, count only failed checks, atomically.
import { type Caller, type RateLimitEngine, then, type Verdict } from './engine.ts';
import type { ControlName } from './policy.ts';
import type { MaybePromise } from './stores/store.ts';

export type LoginAttempt =
  | { readonly refused: Verdict }
  | {
      readonly refused: null;
      /** Reports the credential check's outcome: a failure keeps the reserved units, a success returns them. */
      settle(succeeded: boolean): Promise<void>;
    };

/**
 * Reserves one unit of the account's and of the IP's failure budget before the password is
 * checked. A reservation is an admission recorded in the store, so N parallel attempts can never
 * all see "9 of 10 used" and then all fail: at most the budget's worth are ever in flight or
 * counted. On success the account's counter is cleared and the IP's reserved unit is released by
 * its token (that exact admission, not "one less somewhere"); a failure simply keeps them.
 */
export async function attemptLogin(
  engine: RateLimitEngine,
  controls: readonly ControlName[],
  caller: Caller,
  email: string,
): Promise<LoginAttempt> {
  const reserved: { name: ControlName; key: string; token: number }[] = [];
  const releaseAll = () =>
    Promise.all(reserved.map((r) => engine.store.release(engine.controls[r.name].rule, r.key, r.token)));
  for (const name of controls) {
    const key = engine.keyFor(engine.controls[name], caller, email);
    const verdict = await engine.consume(name, key);
    if (!verdict.decision.allowed) {
      await releaseAll(); // a refused login is not a failure: give back what this attempt took
      return { refused: verdict };
    }
    reserved.push({ name, key, token: verdict.decision.token! });
  }
  return {
    refused: null,
    async settle(succeeded) {
      if (!succeeded) return;
      await Promise.all(
        reserved.map((r): MaybePromise<void> => {
          const bound = engine.controls[r.name];
          return bound.control.key === 'account'
            ? engine.store.reset(bound.rule, r.key)
            : engine.store.release(bound.rule, r.key, r.token);
        }),
      );
    },
  };
}

/**
 * A look, spending nothing, at whether the login control keyed by `keyKind` is locked: the address
 * before the body is read, the account once it is, so a locked caller gets its 429 before CSRF
 * and field validation, as for every other limiter.
 */
export function peekLoginLock(
  engine: RateLimitEngine,
  controls: readonly ControlName[],
  caller: Caller,
  keyKind: 'ip' | 'account',
  email?: string,
): MaybePromise<Verdict | null> {
  const name = controls.find((control) => engine.controls[control].control.key === keyKind);
  if (!name) return null;
  return then(engine.peek(name, engine.keyFor(engine.controls[name], caller, email)), (verdict) =>
    verdict.decision.allowed ? null : verdict,
  );
}
