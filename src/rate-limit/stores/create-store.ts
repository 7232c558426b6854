// Builds the store stack the options ask for: in memory, or Redis / Redis Cluster behind a failover.
import type { Clock } from '../../clock.ts';
import { FailoverStore } from './failover-store.ts';
import { MemoryStore } from './memory-store.ts';
import type {
  RateLimitStore,
  ReadinessCheck,
  RedisSettings,
  RemoteStore,
  StoreFailureMode,
  StoreLogger,
} from './store.ts';

/** How long a starting instance waits for Redis before serving anyway (then on its fallback). */
const STARTUP_WAIT_MS = 2000;

/** Plain settings, taken from the Config by the caller. */
export interface StoreOptions {
  /** Redis or Redis Cluster; the in-memory store when neither `url` nor `clusterNodes` is set. */
  readonly redis: RedisSettings;
  /** What applies while Redis is unavailable (RATE_LIMIT_STORE_FAILURE). */
  readonly failureMode: StoreFailureMode;
  /** How long after a failure Redis is left alone before it is probed again (tests shorten it). */
  readonly retryAfterMs?: number;
}

/**
 * What the app gets: the store it decides with, what /readyz asks, and the labels the metrics give
 * the store. Timing and outages are published on the channels of `store-events.ts`, naming `store`.
 */
export interface StoreStack {
  readonly store: RateLimitStore;
  readonly readiness: readonly ReadinessCheck[];
  /** Whether the remote store is unavailable now (its failure mode applies); never for a local stack. */
  degraded(): boolean;
  readonly backend: {
    /** `memory`, or the remote store's name (`redis`). */
    readonly name: string;
    /** `none` when there is nothing remote to fail. */
    readonly failureMode: StoreFailureMode | 'none';
  };
  close(): Promise<void>;
}

/**
 * A MemoryStore without Redis settings; with them, a RedisStore (time from Redis `TIME`) inside a
 * FailoverStore that applies the failure mode. Waits at most STARTUP_WAIT_MS for Redis.
 */
export async function createStore(
  options: StoreOptions,
  clock: Clock,
  logger: StoreLogger,
): Promise<StoreStack> {
  const { redis } = options;
  if (!redis.url && !redis.clusterNodes) return localStack(new MemoryStore({ clock }));
  // ioredis is loaded only for a configured Redis: an instance without one never holds it (BENCHMARKS.md).
  const { createRedisClient, RedisStore } = await import('./redis-store.ts');
  const remote = new RedisStore({
    client: createRedisClient(redis),
    keyPrefix: redis.keyPrefix,
    timeoutMs: redis.commandTimeoutMs,
  });
  // Not fatal: an instance that starts while Redis is down serves on its fallback and recovers
  // later. It is degraded from its first moment then, and says so (/metrics, /readyz, the log)
  // before any request asks.
  const connected = await remote.ready(STARTUP_WAIT_MS);
  const unavailableAtStart = connected
    ? undefined
    : `${remote.name} did not answer within ${STARTUP_WAIT_MS} ms of the start`;
  return failoverStack(remote, { ...options, unavailableAtStart }, clock, logger);
}

/** A stack of one store kept in this process: nothing for /readyz to ask, nothing to fail over. */
export function localStack(store: RateLimitStore): StoreStack {
  return {
    store,
    readiness: [],
    degraded: () => false,
    backend: { name: 'memory', failureMode: 'none' },
    close: () => store.close(),
  };
}

/** `remote` behind a FailoverStore with an in-memory fallback (createStore's Redis, or a test's fake). */
export function failoverStack(
  remote: RemoteStore,
  options: Pick<StoreOptions, 'failureMode' | 'retryAfterMs'> & { readonly unavailableAtStart?: string },
  clock: Clock,
  logger: StoreLogger,
): StoreStack {
  const store = new FailoverStore({
    remote,
    local: new MemoryStore({ clock }),
    mode: options.failureMode,
    clock,
    log: logger.child({ component: 'rate-limit-store' }),
    retryAfterMs: options.retryAfterMs,
    unavailableAtStart: options.unavailableAtStart,
  });
  return {
    store,
    readiness: [store.readiness()],
    degraded: () => store.degraded,
    backend: { name: remote.name, failureMode: options.failureMode },
    close: () => store.close(),
  };
}
