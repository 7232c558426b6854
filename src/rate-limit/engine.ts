// Turns a control and a key into a verdict under the control's mode; the only door to the store.
import diagnostics from 'node:diagnostics_channel';
import type { Clock } from '../clock.ts';
import { normaliseEmail } from '../email.ts';
import type { ErrorCode } from '../errors.ts';
import {
  type BoundControl,
  type BoundPolicy,
  bindPolicy,
  type Caller,
  type ControlMode,
  type ControlName,
  controlsFor,
  type PolicyLimits,
} from './policy.ts';
import type { MaybePromise, RateDecision, RateLimitStore } from './stores/store.ts';

export interface Verdict {
  readonly bound: BoundControl;
  readonly decision: RateDecision;
  /** True when the request must be refused: the decision refused, and the control enforces. */
  readonly refused: boolean;
}

export interface RateLimitReport {
  control: ControlName;
  code: ErrorCode;
  mode: ControlMode;
  limit: number;
  windowSeconds: number;
  remaining: number;
  resetSeconds: number;
}

/** A key a control refuses now, as the lock index and a look at its state tell. */
export interface Lock {
  readonly control: ControlName;
  readonly key: string;
  /** Failures counted in the window (the whole budget while it refuses). */
  readonly failures: number;
  /** Seconds until the key can be admitted again. */
  readonly retryAfter: number;
}

/** The most locks listed per control: an attack over many accounts must not make the list unbounded. */
const LOCKS_LISTED_MAX = 500;

/** The part of a pino logger the engine writes with. */
export interface EngineLogger {
  info(details: object, message: string): void;
}

export interface EngineOptions {
  readonly clock: Clock;
  readonly log: EngineLogger;
}

/** Published once per request a control in shadow mode would have refused. */
export interface ShadowRefusalEvent {
  readonly engine: RateLimitEngine;
  readonly control: ControlName;
}

/** Where would-be refusals of controls in shadow mode are published (the metrics plugin counts them). */
export const shadowRefusalChannel = diagnostics.channel('tp:rate-limit:shadow-refusal');

/** At most one log line per control per this many ms about its would-be refusals. */
const SHADOW_LOG_INTERVAL_MS = 1000;

export class RateLimitEngine {
  readonly controls: BoundPolicy;
  private readonly store: RateLimitStore;
  private readonly clock: Clock;
  private readonly log: EngineLogger;
  /** Per control in shadow mode: when its last line was logged, and the would-be refusals since. */
  private readonly shadowLog = new Map<ControlName, { loggedAt: number; unlogged: number }>();

  constructor(limits: PolicyLimits, store: RateLimitStore, options: EngineOptions) {
    this.controls = bindPolicy(limits);
    this.store = store;
    this.clock = options.clock;
    this.log = options.log;
  }

  /** Check-and-consume under the control's mode; a refusal in shadow mode is reported and let through. */
  consume(name: ControlName, key: string): MaybePromise<Verdict> {
    const bound = this.controls[name];
    const decision = this.store.consume(bound.rule, key);
    // The memory store's decision is there at once: no closure made for it.
    return decision instanceof Promise
      ? decision.then((settled) => this.verdictOfConsume(bound, settled))
      : this.verdictOfConsume(bound, decision);
  }

  private verdictOfConsume(bound: BoundControl, decision: RateDecision): Verdict {
    if (!decision.allowed && bound.mode === 'shadow') this.shadowRefused(bound.control.name);
    return verdictOf(bound, decision);
  }

  /** The verdict `consume` would give now, spending nothing and reporting nothing. */
  peek(name: ControlName, key: string): MaybePromise<Verdict> {
    const bound = this.controls[name];
    return then(this.store.peek(bound.rule, key), (decision) => verdictOf(bound, decision));
  }

  /** Takes back exactly the admission `token` names (see RateLimitStore.release). */
  release(name: ControlName, key: string, token: number): MaybePromise<void> {
    return this.store.release(this.controls[name].rule, key, token);
  }

  reset(name: ControlName, key: string): MaybePromise<void> {
    return this.store.reset(this.controls[name].rule, key);
  }

  /** Clears the login-failure counter of the account `email` names (any spelling of it). */
  resetAccount(email: string): MaybePromise<void> {
    return this.reset('login-account', normaliseEmail(email));
  }

  /** Notes in the control's lock index that `key` spent its budget, for `resetMs` (see RateLimitStore.noteLock). */
  noteLock(name: ControlName, key: string, resetMs: number): MaybePromise<void> {
    return this.store.noteLock(this.controls[name].rule, key, resetMs);
  }

  /**
   * The keys the control refuses now: its lock index, each entry confirmed by a look at the key's
   * state (an index entry outlives a reset or a given-back unit; the look drops it), latest end first.
   */
  async lockedNow(name: ControlName): Promise<Lock[]> {
    const bound = this.controls[name];
    const entries = await this.store.locks(bound.rule, LOCKS_LISTED_MAX);
    const verdicts = await Promise.all(entries.map(({ key }) => this.peek(name, key)));
    const locks: Lock[] = [];
    entries.forEach(({ key }, i) => {
      const { decision } = verdicts[i]!;
      if (decision.allowed) return;
      locks.push({
        control: name,
        key,
        failures: bound.rule.limit - decision.remaining,
        retryAfter: resetSeconds(decision),
      });
    });
    return locks.sort((a, b) => b.retryAfter - a.retryAfter);
  }

  /** The caller's state under every control that applies to it (policy.controlsFor), spending nothing. */
  async reportFor(caller: Caller): Promise<RateLimitReport[]> {
    const verdicts = await Promise.all(controlsFor(caller).map(({ name, key }) => this.peek(name, key)));
    return verdicts.map((verdict) => this.report(verdict));
  }

  report({ bound, decision }: Verdict): RateLimitReport {
    return {
      control: bound.control.name,
      code: bound.control.code,
      mode: bound.mode,
      limit: bound.rule.limit,
      windowSeconds: bound.windowSeconds,
      remaining: decision.remaining,
      resetSeconds: resetSeconds(decision),
    };
  }

  /** Publishes a would-be refusal, and logs at most one line per control per second (with the count). */
  private shadowRefused(control: ControlName): void {
    if (shadowRefusalChannel.hasSubscribers)
      shadowRefusalChannel.publish({ engine: this, control } satisfies ShadowRefusalEvent);
    const now = this.clock.now();
    let state = this.shadowLog.get(control);
    if (!state) {
      state = { loggedAt: Number.NEGATIVE_INFINITY, unlogged: 0 };
      this.shadowLog.set(control, state);
    }
    state.unlogged++;
    // A clock set back must not silence the control for as long.
    if (now - state.loggedAt < SHADOW_LOG_INTERVAL_MS && now >= state.loggedAt) return;
    this.log.info(
      { control, wouldHaveRefused: state.unlogged },
      `rate-limit shadow mode: ${control} would have refused ${state.unlogged} request(s)`,
    );
    state.loggedAt = now;
    state.unlogged = 0;
  }
}

/** A decision under the control's mode: only an enforced control refuses. */
function verdictOf(bound: BoundControl, decision: RateDecision): Verdict {
  return { bound, decision, refused: !decision.allowed && bound.mode === 'enforce' };
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
