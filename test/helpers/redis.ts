// Redis stores for tests: a unique key prefix per test run, so test files running in parallel never collide.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../src/clock.ts';
import { createRedisClient, RedisStore } from '../../src/rate-limit/stores/redis-store.ts';
import { testConfig } from './app.ts';
import { REDIS_URL } from './services.ts';

/** A key prefix no other test run uses (REDIS_KEY_PREFIX form). */
export function uniquePrefix(): string {
  return `test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

export interface RedisTarget {
  /** REDIS_URL, or REDIS_CLUSTER_NODES when `cluster` is set. */
  readonly url?: string;
  readonly cluster?: string;
  readonly prefix?: string;
  /** Decide at this clock's time instead of Redis TIME (the store-contract suite moves it). */
  readonly clock?: Clock;
  readonly timeoutMs?: number;
  /** Live single-use marks per scope at most (the store's default when absent). */
  readonly marksMax?: number;
}

/** The `redis` part of a Config, as the server would read it from the environment. */
export function redisConfig(target: RedisTarget = {}) {
  return testConfig({
    ...(target.cluster ? { REDIS_CLUSTER_NODES: target.cluster } : { REDIS_URL: target.url ?? REDIS_URL }),
    REDIS_KEY_PREFIX: target.prefix ?? uniquePrefix(),
    // Generous by default: a loaded CI machine must not turn a slow answer into a failed test.
    REDIS_COMMAND_TIMEOUT_MS: String(target.timeoutMs ?? 1000),
  }).redis;
}

/** A connected RedisStore (waits up to 5 s for the connection). */
export async function openRedisStore(target: RedisTarget = {}): Promise<RedisStore> {
  const config = redisConfig(target);
  const store = new RedisStore({
    client: createRedisClient(config),
    keyPrefix: config.keyPrefix,
    timeoutMs: config.commandTimeoutMs,
    clock: target.clock,
    marksMax: target.marksMax,
  });
  if (!(await store.ready(5000))) {
    await store.close();
    throw new Error(`Redis at ${target.cluster ?? target.url ?? REDIS_URL} did not become ready`);
  }
  return store;
}
