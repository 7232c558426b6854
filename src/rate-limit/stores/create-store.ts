// Chooses the rate-limit store the configuration asks for: in memory, or Redis / Redis Cluster with a fallback.
import pino from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { ReadinessCheck } from '../../http/services.ts';
import { FailoverStore, type StoreLog } from './failover-store.ts';
import { MemoryStore } from './memory-store.ts';
import { createRedisClient, RedisStore } from './redis-store.ts';
import type { RateLimitStore } from './store.ts';
import { TimedStore } from './timed-store.ts';

/** How long a starting instance waits for Redis before serving anyway (then on its fallback). */
const STARTUP_WAIT_MS = 2000;

export interface CreateStoreOptions {
  /** Where the failover store logs an outage's start and end; by default a logger of its own. */
  readonly log?: StoreLog;
  /** Passed to FailoverStore (tests shorten it). */
  readonly retryAfterMs?: number;
}

/**
 * A MemoryStore without Redis settings; with REDIS_URL or REDIS_CLUSTER_NODES, a RedisStore (time
 * from Redis `TIME`) inside a FailoverStore that applies RATE_LIMIT_STORE_FAILURE.
 */
export async function createStore(
  config: Config,
  clock: Clock,
  options: CreateStoreOptions = {},
): Promise<RateLimitStore> {
  const local = new MemoryStore({ clock });
  const { redis } = config;
  if (!redis.url && !redis.clusterNodes) return local;
  const store = new RedisStore({
    client: createRedisClient(redis),
    keyPrefix: redis.keyPrefix,
    timeoutMs: redis.commandTimeoutMs,
  });
  // Not fatal: an instance that starts while Redis is down serves on its fallback and recovers later.
  await store.ready(STARTUP_WAIT_MS);
  return new FailoverStore({
    redis: store,
    local,
    mode: config.rateLimits.storeFailure,
    // The store is built before the app and its logger; this one writes the same JSON lines.
    log: options.log ?? pino({ level: config.logLevel }).child({ component: 'rate-limit-store' }),
    retryAfterMs: options.retryAfterMs,
  });
}

/** The readiness checks a store contributes to /readyz: Redis's state when Redis is in use. */
export function storeReadiness(store: RateLimitStore): ReadinessCheck[] {
  const inner = store instanceof TimedStore ? store.inner : store;
  return inner instanceof FailoverStore ? [inner.readiness()] : [];
}
