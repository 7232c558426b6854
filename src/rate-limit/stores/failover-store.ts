// The limiter while the remote store fails: local, admit-all or 503, per RATE_LIMIT_STORE_FAILURE.
import type { Clock } from '../../clock.ts';
import {
  type LockEntry,
  type MaybePromise,
  type RateDecision,
  type RateLimitStore,
  type RateRule,
  type ReadinessCheck,
  type RemoteStore,
  type StoreFailureMode,
  type StoreLogger,
  StoreUnavailableError,
} from './store.ts';
import {
  type DecisionEvent,
  decisionChannel,
  type RemoteErrorEvent,
  redisErrorChannel,
  type StoreStateEvent,
  storeStateChannel,
} from './store-events.ts';

export interface FailoverStoreOptions {
  readonly remote: RemoteStore;
  /** Where decisions go while the remote store is down, in `local` mode (a MemoryStore). */
  readonly local: RateLimitStore;
  readonly mode: StoreFailureMode;
  /** Measures the retry interval and the length of an outage (never a request's latency). */
  readonly clock: Clock;
  readonly log: StoreLogger;
  /**
   * After a failure, how long requests leave the remote store alone before it is probed again (by
   * a PING in the background, never on a request's path): a dead Redis then costs no timeout per
   * request.
   */
  readonly retryAfterMs?: number;
  /**
   * Why the remote store is taken for unavailable from the start (it did not answer while the
   * instance started): the store is degraded from its first moment, says so in its one log line
   * and probes every retry interval, without waiting for a request to find out (docs/rules.md#deployment).
   */
  readonly unavailableAtStart?: string;
}

type Operation = RemoteErrorEvent['operation'];

/*
 * Tokens say which store holds an admission, so that `release` takes back exactly that one even
 * when the remote store fails or returns between a consume and its release: remote tokens are its
 * times (never negative), local ones are mapped to -1 - time.
 */
const toLocalToken = (time: number): number => -1 - time;
const isLocalToken = (token: number): boolean => token < 0;

export class FailoverStore implements RateLimitStore {
  readonly mode: StoreFailureMode;
  private readonly remote: RemoteStore;
  private readonly local: RateLimitStore;
  private readonly clock: Clock;
  private readonly log: StoreLogger;
  private readonly retryAfterMs: number;
  /** The clock's time when the current outage began; null while the remote store answers. */
  private downSince: number | null = null;
  /** No probe before this time (the clock's). */
  private retryAt = 0;
  private probe: Promise<void> | null = null;
  /** While the remote store is down: probes it every retry interval even when no request comes. */
  private watch: ReturnType<typeof setInterval> | null = null;
  private closed = false;

  constructor(options: FailoverStoreOptions) {
    this.remote = options.remote;
    this.local = options.local;
    this.mode = options.mode;
    this.clock = options.clock;
    this.log = options.log;
    this.retryAfterMs = options.retryAfterMs ?? 1000;
    if (options.unavailableAtStart !== undefined)
      this.markDown('ping', new StoreUnavailableError(options.unavailableAtStart));
  }

  get degraded(): boolean {
    return this.downSince !== null;
  }

  consume(rule: RateRule, key: string): MaybePromise<RateDecision> {
    return this.decide(rule, key, 'consume');
  }

  peek(rule: RateRule, key: string): MaybePromise<RateDecision> {
    return this.decide(rule, key, 'peek');
  }

  release(rule: RateRule, key: string, token: number): MaybePromise<void> {
    if (!Number.isFinite(token)) return; // `open` decisions record nothing, so carry no token
    if (isLocalToken(token)) return this.local.release(rule, key, toLocalToken(token));
    // A remote admission can only be taken back there; while it is down the unit stays spent
    // there (the conservative side), except in `closed` mode, which fails every operation.
    if (!this.useRemote()) return this.mode === 'closed' ? this.unavailable() : undefined;
    return this.remote
      .release(rule, key, token)
      .catch((error) => this.failed('release', error, () => undefined));
  }

  reset(rule: RateRule, key: string): MaybePromise<void> {
    // The local store may hold this key from an earlier outage: forget it there too.
    const local = this.mode === 'local' ? this.local.reset(rule, key) : undefined;
    if (!this.useRemote()) return this.mode === 'closed' ? this.unavailable() : local;
    return this.remote.reset(rule, key).catch((error) => this.failed('reset', error, () => local));
  }

  noteLock(rule: RateRule, key: string, resetMs: number): MaybePromise<void> {
    const fallback = (): MaybePromise<void> => {
      if (this.mode === 'closed') this.unavailable();
      return this.mode === 'local' ? this.local.noteLock(rule, key, resetMs) : undefined;
    };
    if (!this.useRemote()) return fallback();
    return this.remote
      .noteLock(rule, key, resetMs)
      .catch((error) => this.failed('noteLock', error, fallback));
  }

  /** The remote index while it answers; during an outage, the local one in `local` mode (its own locks). */
  locks(rule: RateRule, max: number): MaybePromise<readonly LockEntry[]> {
    const fallback = (): MaybePromise<readonly LockEntry[]> => {
      if (this.mode === 'closed') this.unavailable();
      return this.mode === 'local' ? this.local.locks(rule, max) : [];
    };
    if (!this.useRemote()) return fallback();
    return this.remote.locks(rule, max).catch((error) => this.failed('locks', error, fallback));
  }

  /**
   * While the remote store is away a claim is never granted, whatever the mode: granted locally,
   * one id could be used once on every instance. False is the safe answer (a proof of work then
   * counts as none); it is never an error.
   */
  claimOnce(scope: string, series: string, slot: number, ttlMs: number): MaybePromise<boolean> {
    if (!this.useRemote()) return false;
    return this.remote.claimOnce(scope, series, slot, ttlMs).catch((error: unknown) => {
      if (!(error instanceof StoreUnavailableError)) throw error;
      this.markDown('claimOnce', error);
      return false;
    });
  }

  /*
   * Single-use marks go to the local store while the remote one is down, in `open` mode too: a
   * mark must never be "admitted" without a record, or a challenge could be used twice. A mark put
   * on one side and looked for on the other is simply not found (the sign-in fails, never replays).
   */
  putOnce(scope: string, holder: string, mark: string, ttlMs: number): MaybePromise<number> {
    const fallback = (): MaybePromise<number> =>
      this.mode === 'closed' ? this.unavailable() : this.local.putOnce(scope, holder, mark, ttlMs);
    if (!this.useRemote()) return fallback();
    return this.remote
      .putOnce(scope, holder, mark, ttlMs)
      .catch((error) => this.failed('putOnce', error, fallback));
  }

  takeOnce(scope: string, holder: string, mark: string): MaybePromise<boolean> {
    const fallback = (): MaybePromise<boolean> =>
      this.mode === 'closed' ? this.unavailable() : this.local.takeOnce(scope, holder, mark);
    if (!this.useRemote()) return fallback();
    return this.remote
      .takeOnce(scope, holder, mark)
      .catch((error) => this.failed('takeOnce', error, fallback));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopWatch();
    await Promise.all([this.remote.close(), this.local.close()]);
  }

  /** /readyz's view: the remote 'up' or 'down'; fatal only when `closed` mode turns that into 503s. */
  readiness(): ReadinessCheck {
    return {
      name: this.remote.name,
      check: async () => {
        // Ask the remote store itself, so readiness is current even when no request tried it
        // lately; while it is down, by the probe (when one is due, or the one under way).
        if (this.downSince === null) await this.remote.ping().catch((error) => this.markDown('ping', error));
        else await this.probeIfDue();
        return { state: this.degraded ? 'down' : 'up', fatal: this.degraded && this.mode === 'closed' };
      },
    };
  }

  private decide(rule: RateRule, key: string, operation: 'consume' | 'peek'): MaybePromise<RateDecision> {
    if (!this.useRemote()) return this.fallback(rule, key, operation);
    // Latency is real elapsed time, whatever the injected clock says; read only when observed.
    const started = decisionChannel.hasSubscribers ? performance.now() : -1;
    const asked = operation === 'consume' ? this.remote.consume(rule, key) : this.remote.peek(rule, key);
    // One reaction for both outcomes (this is every remote decision's path); failed ones are
    // timed too: a timeout is the latency most worth seeing.
    return asked.then(
      (decision) => {
        if (started >= 0) this.publishTiming(rule, operation, started);
        return decision;
      },
      (error) => {
        if (started >= 0) this.publishTiming(rule, operation, started);
        return this.failed(operation, error, () => this.fallback(rule, key, operation));
      },
    );
  }

  /** Publishes how long a remote decision took, from the call until it settled. */
  private publishTiming(rule: RateRule, operation: 'consume' | 'peek', started: number): void {
    decisionChannel.publish({
      store: this,
      control: rule.name,
      operation,
      seconds: (performance.now() - started) / 1000,
    } satisfies DecisionEvent);
  }

  /** Whether this operation goes to the remote store; while it is down, also starts a probe when one is due. */
  private useRemote(): boolean {
    if (this.downSince === null) return true;
    void this.probeIfDue();
    return false;
  }

  /** The probe under way, or a new one when one is due; null when none is. */
  private probeIfDue(): Promise<void> | null {
    return this.probe ?? (this.probeDue() ? this.startProbe() : null);
  }

  private probeDue(): boolean {
    const now = this.clock.now();
    // A wall clock set back must not postpone the next probe by as much.
    return now >= this.retryAt || now < this.retryAt - this.retryAfterMs;
  }

  /** One PING at a time, and at most one per retry interval (counted from its start). */
  private startProbe(): Promise<void> {
    this.retryAt = this.clock.now() + this.retryAfterMs;
    const probe = this.remote
      .ping()
      .then(
        () => this.markUp(),
        (error) => this.markDown('ping', error),
      )
      .finally(() => {
        this.probe = null;
      });
    this.probe = probe;
    return probe;
  }

  /*
   * Requests start the probes during an outage, but an instance nobody asks would stay degraded
   * (its /metrics and /readyz saying so) long after the remote store is back: a timer of its own
   * starts one per interval too. Unref'd, so it never keeps the process alive.
   */
  private startWatch(): void {
    if (this.closed) return;
    this.watch = setInterval(() => void this.probeIfDue(), this.retryAfterMs);
    this.watch.unref();
  }

  private stopWatch(): void {
    if (this.watch !== null) clearInterval(this.watch);
    this.watch = null;
  }

  /** What an operation answers when the remote store is not asked or did not answer, per the failure mode. */
  private fallback(rule: RateRule, key: string, operation: 'consume' | 'peek'): MaybePromise<RateDecision> {
    switch (this.mode) {
      case 'local': {
        const decision = operation === 'consume' ? this.local.consume(rule, key) : this.local.peek(rule, key);
        return decision instanceof Promise ? decision.then(withLocalToken) : withLocalToken(decision);
      }
      case 'open':
        // Admit, and say so honestly: nothing was counted, so the whole budget remains.
        return { allowed: true, limit: rule.limit, remaining: rule.limit, resetMs: 0 };
      case 'closed':
        return this.unavailable();
    }
  }

  private failed<T>(operation: Operation, error: unknown, fallback: () => MaybePromise<T>): MaybePromise<T> {
    if (!(error instanceof StoreUnavailableError)) throw error;
    this.markDown(operation, error);
    if (this.mode === 'closed') throw error;
    return fallback();
  }

  private unavailable(): never {
    throw new StoreUnavailableError(`${this.remote.name} is unavailable (RATE_LIMIT_STORE_FAILURE=closed)`);
  }

  private markDown(operation: Operation, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    if (redisErrorChannel.hasSubscribers) {
      const failure = error instanceof StoreUnavailableError ? error : new StoreUnavailableError(reason);
      redisErrorChannel.publish({ store: this, operation, error: failure } satisfies RemoteErrorEvent);
    }
    const now = this.clock.now();
    this.retryAt = now + this.retryAfterMs;
    if (this.downSince !== null) return;
    this.downSince = now;
    this.startWatch();
    this.log.warn(
      { mode: this.mode, reason, connection: this.remote.health().lastError ?? undefined },
      `rate-limit store degraded: ${this.remote.name} is unavailable; ${MODE_EFFECT[this.mode]}`,
    );
    if (storeStateChannel.hasSubscribers)
      storeStateChannel.publish({
        store: this,
        state: 'degraded',
        mode: this.mode,
        reason,
      } satisfies StoreStateEvent);
  }

  private markUp(): void {
    if (this.downSince === null) return;
    const downMs = Math.max(0, this.clock.now() - this.downSince);
    this.downSince = null;
    this.stopWatch();
    this.log.info(
      { mode: this.mode, downMs },
      `rate-limit store recovered: ${this.remote.name} answers again; budgets are shared again`,
    );
    if (storeStateChannel.hasSubscribers)
      storeStateChannel.publish({
        store: this,
        state: 'recovered',
        mode: this.mode,
        downMs,
      } satisfies StoreStateEvent);
  }
}

const MODE_EFFECT: Readonly<Record<StoreFailureMode, string>> = {
  local: 'each instance enforces the budgets on its own until it is back',
  open: 'requests are admitted without counting until it is back',
  closed: 'requests under a rate limit are answered 503 until it is back',
};

function withLocalToken(decision: RateDecision): RateDecision {
  return decision.token === undefined ? decision : { ...decision, token: toLocalToken(decision.token) };
}
