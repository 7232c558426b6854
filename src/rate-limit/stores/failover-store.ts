// Keeps the limiter answering when Redis fails: a local store, admit-all, or 503, per RATE_LIMIT_STORE_FAILURE.
import type { StoreFailureMode } from '../../config.ts';
import type { ReadinessCheck } from '../../http/services.ts';
import type { RedisStore } from './redis-store.ts';
import {
  type MaybePromise,
  type RateDecision,
  type RateLimitStore,
  type RateRule,
  StoreUnavailableError,
} from './store.ts';

/** The subset of a pino logger the store writes its two kinds of line with. */
export interface StoreLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface FailoverStoreOptions {
  readonly redis: RedisStore;
  /** Where decisions go while Redis is down, in `local` mode (a MemoryStore). */
  readonly local: RateLimitStore;
  readonly mode: StoreFailureMode;
  readonly log: StoreLog;
  /**
   * After a failure, how long requests leave Redis alone before it is probed again (by a PING in
   * the background, never on a request's path): a dead Redis then costs no timeout per request.
   */
  readonly retryAfterMs?: number;
}

export interface StoreHealth {
  readonly mode: StoreFailureMode;
  readonly degraded: boolean;
  /** Redis operations (decisions, give-backs, probes) that failed since the start. */
  readonly redisErrors: number;
}

/*
 * Tokens say which store holds an admission, so that `release` takes back exactly that one even
 * when Redis fails or returns between a consume and its release: Redis tokens are its times
 * (never negative), local ones are mapped to -1 - time.
 */
const toLocalToken = (time: number): number => -1 - time;
const isLocalToken = (token: number): boolean => token < 0;

export class FailoverStore implements RateLimitStore {
  readonly mode: StoreFailureMode;
  private readonly redis: RedisStore;
  private readonly local: RateLimitStore;
  private readonly log: StoreLog;
  private readonly retryAfterMs: number;
  /** performance.now() when the current outage began; null while Redis answers. */
  private downSince: number | null = null;
  private retryAt = 0;
  private probe: Promise<void> | null = null;
  private errors = 0;

  constructor(options: FailoverStoreOptions) {
    this.redis = options.redis;
    this.local = options.local;
    this.mode = options.mode;
    this.log = options.log;
    this.retryAfterMs = options.retryAfterMs ?? 1000;
  }

  get degraded(): boolean {
    return this.downSince !== null;
  }

  health(): StoreHealth {
    return { mode: this.mode, degraded: this.degraded, redisErrors: this.errors };
  }

  consume(rule: RateRule, key: string): MaybePromise<RateDecision> {
    return this.decide(rule, key, true);
  }

  peek(rule: RateRule, key: string): MaybePromise<RateDecision> {
    return this.decide(rule, key, false);
  }

  release(rule: RateRule, key: string, token: number): MaybePromise<void> {
    if (!Number.isFinite(token)) return; // `open` decisions record nothing, so carry no token
    if (isLocalToken(token)) return this.local.release(rule, key, toLocalToken(token));
    // A Redis admission can only be taken back in Redis; while it is down the unit stays spent
    // there (the conservative side), except in `closed` mode, which fails every operation.
    if (!this.useRedis()) return this.mode === 'closed' ? this.unavailable() : undefined;
    return this.redis.release(rule, key, token).catch((error) => this.failed(error, () => undefined));
  }

  reset(rule: RateRule, key: string): MaybePromise<void> {
    // The local store may hold this key from an earlier outage: forget it there too.
    const local = this.mode === 'local' ? this.local.reset(rule, key) : undefined;
    if (!this.useRedis()) return this.mode === 'closed' ? this.unavailable() : local;
    return this.redis.reset(rule, key).catch((error) => this.failed(error, () => local));
  }

  async close(): Promise<void> {
    await Promise.all([this.redis.close(), this.local.close()]);
  }

  /** /readyz's view: Redis 'up' or 'down'; fatal only when `closed` mode turns that into 503s. */
  readiness(): ReadinessCheck {
    return {
      name: 'redis',
      check: async () => {
        // Ask Redis itself, so readiness is current even when no request has tried it lately.
        if (!this.degraded) await this.redis.ping().catch((error) => this.markDown(error));
        else await this.probeNow();
        return { state: this.degraded ? 'down' : 'up', fatal: this.degraded && this.mode === 'closed' };
      },
    };
  }

  private decide(rule: RateRule, key: string, consume: boolean): MaybePromise<RateDecision> {
    if (!this.useRedis()) return this.fallback(rule, key, consume);
    const decision = consume ? this.redis.consume(rule, key) : this.redis.peek(rule, key);
    return decision.catch((error) => this.failed(error, () => this.fallback(rule, key, consume)));
  }

  /** Whether this operation goes to Redis; while it is down, also starts a probe when one is due. */
  private useRedis(): boolean {
    if (this.downSince === null) return true;
    if (performance.now() >= this.retryAt && this.probe === null) void this.probeNow();
    return false;
  }

  private probeNow(): Promise<void> {
    this.probe ??= this.redis
      .ping()
      .then(
        () => this.markUp(),
        (error) => this.markDown(error),
      )
      .finally(() => {
        this.probe = null;
      });
    return this.probe;
  }

  /** What an operation answers when Redis is not asked or did not answer, per the failure mode. */
  private fallback(rule: RateRule, key: string, consume: boolean): MaybePromise<RateDecision> {
    switch (this.mode) {
      case 'local': {
        const decision = consume ? this.local.consume(rule, key) : this.local.peek(rule, key);
        return decision instanceof Promise ? decision.then(withLocalToken) : withLocalToken(decision);
      }
      case 'open':
        // Admit, and say so honestly: nothing was counted, so the whole budget remains.
        return { allowed: true, limit: rule.limit, remaining: rule.limit, resetMs: 0 };
      case 'closed':
        return this.unavailable();
    }
  }

  private failed<T>(error: unknown, fallback: () => MaybePromise<T>): MaybePromise<T> {
    if (!(error instanceof StoreUnavailableError)) throw error;
    this.markDown(error);
    if (this.mode === 'closed') throw error;
    return fallback();
  }

  private unavailable(): never {
    throw new StoreUnavailableError('Redis is unavailable (RATE_LIMIT_STORE_FAILURE=closed)');
  }

  private markDown(error: unknown): void {
    this.errors++;
    const now = performance.now();
    this.retryAt = now + this.retryAfterMs;
    if (this.downSince !== null) return;
    this.downSince = now;
    this.log.warn(
      {
        mode: this.mode,
        reason: error instanceof Error ? error.message : String(error),
        connection: this.redis.lastConnectionError?.message,
      },
      `rate-limit store degraded: Redis is unavailable; ${MODE_EFFECT[this.mode]}`,
    );
  }

  private markUp(): void {
    if (this.downSince === null) return;
    const downMs = Math.round(performance.now() - this.downSince);
    this.downSince = null;
    this.log.info(
      { mode: this.mode, downMs },
      'rate-limit store recovered: Redis answers again; budgets are shared again',
    );
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
