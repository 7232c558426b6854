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

/** Request logs at warn: none per request, like the peers (which log nothing). */
const QUIET = { LOG_LEVEL: 'warn' };

/**
 * Environment for our server: production defaults (request logs at the default level, info, one
 * line per request), a throwaway embedded database. `env` can quieten the logs (LOG_LEVEL=warn).
 */
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
    // Diagnostic: the same Fastify with its own request logs (pino, two lines a request), as a
    // team gets it from `logger: true`: what logging costs Fastify, next to what it costs ours.
    targets.push({
      name: 'fastify-logs',
      file: 'fastify-bare',
      label: 'Fastify, request logs (pino, info)',
      family: 'bare',
      store: 'none',
      env: { BENCH_LOGGER: 'info' },
    });
    // The floor under ours: Fastify sending the nine headers the contract puts on this answer,
    // then also the one request line a request pays for at the default log level; no session, no
    // limiter. What is left between it and ours is what ours does beyond the contract's minimum.
    targets.push({
      name: 'fastify-contract',
      file: 'fastify-contract',
      label: "Fastify + the contract's nine headers",
      family: 'bare',
      store: 'none',
      env: peerEnv(budget, 'none', users, null),
    });
    targets.push({
      name: 'fastify-contract-logs',
      file: 'fastify-contract',
      label: "Fastify + the contract's nine headers + one request line",
      family: 'bare',
      store: 'none',
      env: { ...peerEnv(budget, 'none', users, null), BENCH_CONTRACT_LOGS: '1' },
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
  const ours = (name: string, label: string, store: StoreKind, options: Omit<OursOptions, 'users'>) =>
    targets.push({ name, file: 'ours', label, family: 'ours', store, env: oursEnv({ users, ...options }) });
  ours('ours-memory', 'ours · memory', 'memory', { env: authenticated });
  if (withUnlimited) {
    ours('ours-memory-quiet', 'ours · memory, LOG_LEVEL=warn', 'memory', {
      env: { ...authenticated, ...QUIET },
    });
    // Diagnostic: the same stack with the 2 s session cache of a fleet sharing PostgreSQL, to show
    // what the session reloads (one database query per user every 2 s) cost.
    ours('ours-memory-cache2s', 'ours · memory, SESSION_CACHE_TTL=2s', 'memory', {
      env: { ...authenticated, SESSION_CACHE_TTL: '2s' },
    });
  }
  if (redisUrl && oursHasRedisStore) {
    ours('ours-redis', 'ours · redis', 'redis', { redisUrl, env: authenticated });
    if (withUnlimited)
      ours('ours-redis-quiet', 'ours · redis, LOG_LEVEL=warn', 'redis', {
        redisUrl,
        env: { ...authenticated, ...QUIET },
      });
  }
  return targets;
}

/** Keeps the targets BENCH_TARGETS names (all when empty). */
export function selected<T extends { name: string }>(targets: T[], filter: readonly string[]): T[] {
  return filter.length === 0 ? targets : targets.filter((t) => filter.some((f) => t.name.includes(f)));
}
