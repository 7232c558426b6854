// Turns a caller and a control into a decision and the headers that report it.
import { normaliseEmail } from '../auth/email.ts';
import type { Config } from '../config.ts';
import type { ErrorCode } from '../errors.ts';
import { windowSeconds } from './budget.ts';
import { CONTROLS, type Control, type ControlName } from './policy.ts';
import type { MaybePromise, RateDecision, RateLimitStore, RateRule } from './stores/store.ts';

/** Who is asking: the signed-in user's id (or null) and the client address key (lazily made). */
export interface Caller {
  readonly userId: number | null;
  ipKey(): string;
}

/** A control with its budget bound and its constant header values made once. */
export interface BoundControl {
  readonly control: Control;
  readonly rule: RateRule;
  readonly limitHeader: string;
  readonly policyHeader: string;
  readonly windowSeconds: number;
}

export interface Verdict {
  readonly bound: BoundControl;
  readonly decision: RateDecision;
}

export interface RateLimitReport {
  control: ControlName;
  code: ErrorCode;
  limit: number;
  windowSeconds: number;
  remaining: number;
  resetSeconds: number;
}

export class RateLimitEngine {
  readonly controls: Readonly<Record<ControlName, BoundControl>>;

  readonly store: RateLimitStore;

  constructor(limits: Config['rateLimits'], store: RateLimitStore) {
    this.store = store;
    const bound = {} as Record<ControlName, BoundControl>;
    for (const control of Object.values(CONTROLS)) {
      const budget = control.budget(limits);
      const seconds = windowSeconds(budget);
      bound[control.name] = {
        control,
        rule: Object.freeze({ name: control.name, limit: budget.limit, windowMs: budget.windowMs }),
        limitHeader: String(budget.limit),
        policyHeader: `"${control.name}";q=${budget.limit};w=${seconds}`,
        windowSeconds: seconds,
      };
    }
    this.controls = Object.freeze(bound);
  }

  /** The key of the caller under a control; `account` keys come from the submitted email. */
  keyFor(bound: BoundControl, caller: Caller, account?: string): string {
    switch (bound.control.key) {
      case 'user':
        return String(caller.userId);
      case 'user-else-ip':
        return caller.userId !== null ? `u${caller.userId}` : `ip${caller.ipKey()}`;
      case 'ip':
        return caller.ipKey();
      case 'account':
        return normaliseEmail(account ?? '');
    }
  }

  consume(name: ControlName, key: string): MaybePromise<Verdict> {
    const bound = this.controls[name];
    return verdictOf(bound, this.store.consume(bound.rule, key));
  }

  peek(name: ControlName, key: string): MaybePromise<Verdict> {
    const bound = this.controls[name];
    return verdictOf(bound, this.store.peek(bound.rule, key));
  }

  report({ bound, decision }: Verdict): RateLimitReport {
    return {
      control: bound.control.name,
      code: bound.control.code,
      limit: bound.rule.limit,
      windowSeconds: bound.windowSeconds,
      remaining: decision.remaining,
      resetSeconds: resetSeconds(decision),
    };
  }
}

/** Pairs a decision with its control; a closure only when the store answered with a promise. */
function verdictOf(bound: BoundControl, decision: MaybePromise<RateDecision>): MaybePromise<Verdict> {
  if (decision instanceof Promise) return decision.then((settled) => ({ bound, decision: settled }));
  return { bound, decision };
}

/** Seconds until the next admission, rounded up; at least 1 on a refusal (it is also Retry-After). */
export function resetSeconds(decision: RateDecision): number {
  const seconds = Math.ceil(decision.resetMs / 1000);
  return decision.allowed ? seconds : Math.max(1, seconds);
}

/** Applies `map` without a promise when the value is already there (the memory store's case). */
export function then<T, U>(value: MaybePromise<T>, map: (value: T) => U): MaybePromise<U> {
  return value instanceof Promise ? value.then(map) : map(value);
}
