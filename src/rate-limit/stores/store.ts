// The rate-limit module's interfaces: the store contract and its timing rules, readiness, the log.

/** What a store needs to know of a control: a name that separates key spaces, and its budget. */
export interface RateRule {
  /** The policy name (`task-bulk`, …); keys of different rules never collide. */
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  /** Requests that would be admitted right now (after this one, if it was consumed). */
  readonly remaining: number;
  /** Milliseconds until a request can be admitted; 0 when one can be now. */
  readonly resetMs: number;
  /**
   * Present when an admission was recorded: what `release` needs to take exactly that admission
   * back (the time it was recorded at, in the store's clock).
   */
  readonly token?: number;
}

export type MaybePromise<T> = T | Promise<T>;

/** One entry of a rule's lock index: a key that spent its budget, and the ms until its noted lock ends. */
export interface LockEntry {
  readonly key: string;
  readonly resetMs: number;
}

/**
 * Single-use marks kept where the budgets are, so any instance of a fleet can take one another
 * instance put (a passkey ceremony's challenge). Each holder (what the caller folds its binding
 * into: a browser's pre-session or session) holds at most one live mark per scope, and a scope
 * holds at most the store's cap of live marks (MARKS_MAX unless the store is given another): a
 * full scope refuses a newcomer rather than drop anyone's live mark, so no flood of puts can
 * evict another holder's mark (docs/rules.md#passkeys). Marks of one scope share one lifetime.
 */
export interface SingleUseStore {
  /**
   * Records `mark` as what `holder` holds under `scope` for `ttlMs` (the store's clock), in place
   * of the holder's previous mark. Answers 0 when it is kept; when the scope is full and the holder
   * holds no live mark, nothing changes and the answer is the ms until the scope's first live mark
   * ends (at least 1): the wait for room.
   */
  putOnce(scope: string, holder: string, mark: string, ttlMs: number): MaybePromise<number>;
  /**
   * Removes `holder`'s mark if it is `mark`, and says whether it was there and unexpired: of any
   * number of takers, on one instance or many, at most one ever gets true. Another mark leaves the
   * holder's in place.
   */
  takeOnce(scope: string, holder: string, mark: string): MaybePromise<boolean>;
  /**
   * The other way round, for a self-verifying challenge (proved work): nothing is stored when it
   * is issued, so a flood of challenges nobody answers costs no write; its slot is claimed when it
   * is used. Challenges are issued in series, each with a slot number below WORK_SERIES_SLOTS, and
   * the record is one bit per slot: it is bounded by the challenges issued, and no claims can fill
   * it so that another challenge's claim fails (docs/rules.md#proved-work). Claims `slot` of
   * `series` under `scope` and keeps the series' record at least `ttlMs` (the store's clock); says
   * whether this was the first claim: of any number of claims of one slot while its series is
   * kept, on one instance or many, exactly one gets true. Claims and marks never share keys with
   * each other or with a rule's state.
   */
  claimOnce(scope: string, series: string, slot: number, ttlMs: number): MaybePromise<boolean>;
}

/**
 * A rate-limit store. Every member is atomic per key: two concurrent `consume` calls on one key
 * (from one process or many) can never both take the last unit of budget. Stores persist state
 * only; the window arithmetic is `sliding-window.ts`, mirrored exactly by the Redis scripts.
 * Members may answer synchronously (the memory store does, to keep the hot path free of
 * promises); callers must accept either form.
 */
export interface RateLimitStore extends SingleUseStore {
  /** Check-and-consume: admits and records one request when the budget allows, else refuses. */
  consume(rule: RateRule, key: string): MaybePromise<RateDecision>;
  /** The decision `consume` would make now, recording nothing (`remaining` counts this request). */
  peek(rule: RateRule, key: string): MaybePromise<RateDecision>;
  /**
   * Takes back one admission recorded by `consume` (by its token); a no-op once it has expired, or
   * when the key was reset after the token was issued (told apart to the millisecond).
   */
  release(rule: RateRule, key: string, token: number): MaybePromise<void>;
  /** Forgets everything recorded for the key. */
  reset(rule: RateRule, key: string): MaybePromise<void>;
  /**
   * The lock index, so that admins can list what is locked without a scan over every key: notes
   * that `key` spent its budget and stays locked `resetMs` from now (the store's clock). Noting a
   * key again moves its end. The index lives in one place per rule (one cluster slot), apart from
   * the keys' own state, so it is advisory: readers confirm each entry with `peek`.
   */
  noteLock(rule: RateRule, key: string, resetMs: number): MaybePromise<void>;
  /** Up to `max` noted keys whose lock has not ended, latest end first; ended entries are dropped. */
  locks(rule: RateRule, max: number): MaybePromise<readonly LockEntry[]>;
  close(): Promise<void>;
}

/** `S` with every member answering by promise, never synchronously. */
type AnsweringByPromise<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : S[K];
};

/**
 * A store shared by every instance over the network (Redis, Redis Cluster): it answers only with
 * promises, may be unreachable, and says so by rejecting with StoreUnavailableError. The failover
 * store builds on this interface alone, so it can be tested against a fake one.
 */
export interface RemoteStore extends AnsweringByPromise<RateLimitStore> {
  /** What /readyz and the metrics call it (`redis`). */
  readonly name: string;
  /** Waits until connected, at most `timeoutMs`; true when it is. Never rejects. */
  ready(timeoutMs: number): Promise<boolean>;
  /** Resolves when the store answers within its deadline; rejects with StoreUnavailableError. */
  ping(): Promise<void>;
  /** What the store knows of its connection right now (for the log line of an outage). */
  health(): RemoteHealth;
}

export interface RemoteHealth {
  readonly connected: boolean;
  /** The last connection error the client reported, if any. */
  readonly lastError: string | null;
}

/**
 * At most this many live single-use marks per scope, in every store (a passkey ceremony's
 * challenges; Redis's cap is the fleet's, the memory store's its instance's; the size of a mark is
 * in BENCHMARKS.md). Past it a new holder is refused, never another's mark dropped.
 */
export const MARKS_MAX = 100_000;

/** One dependency's answer to /readyz. */
export interface ReadinessCheck {
  /** The key in /readyz's body (`redis`). */
  readonly name: string;
  /** 'up', 'down', or 'degraded'; `fatal` makes /readyz answer 503. */
  check(): Promise<{ state: string; fatal: boolean }>;
}

/** The part of a pino logger the stores write with (the app passes its own, or a child of it). */
export interface StoreLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
  child(bindings: Record<string, unknown>): StoreLogger;
}

/** Thrown (or rejected with) when the store cannot answer; never confused with a refusal. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** What an instance does while Redis is away (RATE_LIMIT_STORE_FAILURE; docs/operations.md). */
export type StoreFailureMode = 'local' | 'open' | 'closed';

/** Where Redis is and how long a command may take: the config's `redis`, read by config.ts. */
export interface RedisSettings {
  readonly url: string | null;
  readonly clusterNodes: readonly { host: string; port: number }[] | null;
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
}
