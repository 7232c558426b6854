// The targets of a run and the environment each one starts with (budgets, stores, databases).
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TargetSpec } from './target-process.ts';

export type Family = 'ceiling' | 'bare' | 'peer' | 'ours';
export type StoreKind = 'none' | 'memory' | 'redis';

export interface BenchTarget extends TargetSpec {
  readonly label: string;
  readonly family: Family;
  readonly store: StoreKind;
}

export interface Budget {
  readonly limit: number;
  readonly windowMs: number;
}

/** Budgets of the two kinds of run: one that never refuses, one spent after the first request. */
export const NEVER_REFUSES: Budget = { limit: 999_999_999, windowMs: 15 * 60_000 };
export const EXHAUSTED: Budget = { limit: 1, windowMs: 15 * 60_000 };

/**
 * How long our instances serve a session from their cache: the service's default (5 min on the
 * embedded database, which every target here uses) unless BENCH_SESSION_CACHE_TTL overrides it.
 */
export const SESSION_CACHE_TTL = process.env.BENCH_SESSION_CACHE_TTL ?? '';

/** Whether our Redis store exists yet (another change adds it; REDIS_URL selects it). */
export const oursHasRedisStore = existsSync(
  new URL('../../src/rate-limit/stores/redis-store.ts', import.meta.url),
);

const SESSION_SECRET = 'bench-session-secret-bench-session-secret';
const temporaryDirs: string[] = [];

/** Data directories made for embedded databases, for the driver to remove at the end. */
export function benchDataDirs(): readonly string[] {
  return temporaryDirs;
}

export interface OursOptions {
  readonly users: number;
  readonly redisUrl?: string | null;
  readonly databaseUrl?: string | null;
  /** Environment on top (budgets). */
  readonly env?: Record<string, string>;
}

/** Environment for our server: production mode, warn-level logs, a throwaway embedded database. */
export function oursEnv(options: OursOptions): Record<string, string> {
  let dataDir = '';
  if (!options.databaseUrl) {
    dataDir = mkdtempSync(join(tmpdir(), 'tp-bench-'));
    temporaryDirs.push(dataDir);
  }
  return {
    NODE_ENV: 'production',
    SESSION_SECRET,
    PASSWORD_HASH_COST: '64',
    // Peers log nothing; at info level our server would also write two log lines per request.
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'true',
    DATA_DIR: dataDir || join(tmpdir(), 'tp-bench-unused'),
    DATABASE_URL: options.databaseUrl ?? '',
    REDIS_URL: options.redisUrl ?? '',
    REDIS_KEY_PREFIX: `bench${process.pid}x${temporaryDirs.length}:`,
    ...(SESSION_CACHE_TTL ? { SESSION_CACHE_TTL } : {}),
    BENCH_USERS: String(options.users),
    BENCH_EXPECT_STORE: options.redisUrl ? 'redis' : 'memory',
    // A Redis failure must show as a 503, not as a quiet fallback to memory mid-measurement.
    RATE_LIMIT_STORE_FAILURE: 'closed',
    // The peers' clients have no command timeout; ours keeps one, long enough that a loaded
    // machine's scheduling delays do not turn into 503s (the default of 100 ms did, here).
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    ...options.env,
  };
}

function peerEnv(budget: Budget, store: StoreKind, users: number, redisUrl: string | null) {
  return {
    BENCH_LIMIT: String(budget.limit),
    BENCH_WINDOW_MS: String(budget.windowMs),
    BENCH_STORE: store,
    BENCH_REDIS_URL: redisUrl ?? '',
    BENCH_USERS: String(users),
  };
}

/**
 * Every target of the generic-bucket comparison, in table order. Redis targets only when a Redis
 * answers; ours on Redis only once its store exists. `withUnlimited` adds the two without a limiter.
 */
export function comparisonTargets(
  budget: Budget,
  users: number,
  redisUrl: string | null,
  withUnlimited: boolean,
): BenchTarget[] {
  const authenticated = { RATE_LIMIT_AUTHENTICATED: `${budget.limit}/${budget.windowMs}ms` };
  const stores: StoreKind[] = redisUrl ? ['memory', 'redis'] : ['memory'];
  const targets: BenchTarget[] = [];
  if (withUnlimited) {
    targets.push({
      name: 'raw',
      file: 'raw-http',
      label: 'node:http (raw)',
      family: 'ceiling',
      store: 'none',
    });
    targets.push({
      name: 'fastify-bare',
      file: 'fastify-bare',
      label: 'Fastify',
      family: 'bare',
      store: 'none',
    });
  }
  const peers = [
    { name: 'fastify-rate-limit', label: 'Fastify + @fastify/rate-limit' },
    { name: 'express-rate-limit', label: 'Express + express-rate-limit' },
    { name: 'rate-limiter-flexible', label: 'Fastify + rate-limiter-flexible' },
  ];
  for (const store of stores) {
    for (const peer of peers) {
      const label =
        peer.name === 'express-rate-limit' && store === 'redis' ? 'Express + rate-limit-redis' : peer.label;
      targets.push({
        name: `${peer.name}-${store}`,
        file: peer.name,
        label: `${label} · ${store}`,
        family: 'peer',
        store,
        env: peerEnv(budget, store, users, redisUrl),
      });
    }
  }
  targets.push({
    name: 'ours-memory',
    file: 'ours',
    label: 'ours · memory',
    family: 'ours',
    store: 'memory',
    env: oursEnv({ users, env: authenticated }),
  });
  if (withUnlimited) {
    // Diagnostic: the same stack with the 2 s session cache of a fleet sharing PostgreSQL, to show
    // what the session reloads (one database query per user every 2 s) cost.
    targets.push({
      name: 'ours-memory-cache2s',
      file: 'ours',
      label: 'ours · memory, SESSION_CACHE_TTL=2s',
      family: 'ours',
      store: 'memory',
      env: oursEnv({ users, env: { ...authenticated, SESSION_CACHE_TTL: '2s' } }),
    });
  }
  if (redisUrl && oursHasRedisStore) {
    targets.push({
      name: 'ours-redis',
      file: 'ours',
      label: 'ours · redis',
      family: 'ours',
      store: 'redis',
      env: oursEnv({ users, redisUrl, env: authenticated }),
    });
  }
  return targets;
}

/** Keeps the targets BENCH_TARGETS names (all when empty). */
export function selected<T extends { name: string }>(targets: T[], filter: readonly string[]): T[] {
  return filter.length === 0 ? targets : targets.filter((t) => filter.some((f) => t.name.includes(f)));
}
