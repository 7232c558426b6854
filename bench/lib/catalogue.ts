// The targets of a run and the environment each one starts with (budgets, stores, databases).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TargetSpec } from './target-process.ts';

/**
 * floor: Fastify doing the API's minimum; stack: what a team would assemble from well-kept
 * plugins; peer: Fastify or Express with one rate-limit library and nothing else; ours.
 */
export type Family = 'floor' | 'stack' | 'peer' | 'ours';
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

/** The budget of every run: large enough that no request is refused. */
export const NEVER_REFUSES: Budget = { limit: 999_999_999, windowMs: 15 * 60_000 };

/**
 * How long our instances serve a session from their cache: the service's default (5 min on the
 * embedded database, which every target here uses) unless BENCH_SESSION_CACHE_TTL overrides it.
 */
export const SESSION_CACHE_TTL = process.env.BENCH_SESSION_CACHE_TTL ?? '';

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
    // The thousand logins at start are not measured: under callgrind (fifty times slower) the
    // login gate would shed them as too slow, so the start waits as long as the gate allows.
    LOGIN_QUEUE_MAX_WAIT: '60s',
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
 * Every target of the table, in table order: the API's floor, the two stacks a team would
 * assemble, the rate-limit libraries alone, ours. Redis targets only when a Redis answers.
 */
export function comparisonTargets(budget: Budget, users: number, redisUrl: string | null): BenchTarget[] {
  const stores: StoreKind[] = redisUrl ? ['memory', 'redis'] : ['memory'];
  const env = (store: StoreKind) => peerEnv(budget, store, users, store === 'redis' ? redisUrl : null);
  // The floor under ours: Fastify sending the nine headers the contract puts on this answer and
  // one request line at info; no session, no limiter. What is left between it and ours is what
  // ours does beyond the API's minimum.
  const targets: BenchTarget[] = [
    {
      name: 'fastify-contract',
      file: 'fastify-contract',
      label: "floor: Fastify + the API's nine headers + one request line",
      family: 'floor',
      store: 'none',
      env: env('none'),
    },
  ];
  const stack = '+ session + CSRF + helmet + rate limit + request logs';
  for (const store of stores)
    targets.push({
      name: `fastify-stack-${store}`,
      file: 'fastify-stack',
      label: `Fastify ${stack} · ${store}`,
      family: 'stack',
      store,
      env: env(store),
    });
  targets.push({
    name: 'express-stack-memory',
    file: 'express-stack',
    label: `Express 5 ${stack} · memory`,
    family: 'stack',
    store: 'memory',
    env: env('memory'),
  });
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
        env: env(store),
      });
    }
  }
  const authenticated = { RATE_LIMIT_AUTHENTICATED: `${budget.limit}/${budget.windowMs}ms` };
  for (const store of stores)
    targets.push({
      name: `ours-${store}`,
      file: 'ours',
      label: `ours · ${store}`,
      family: 'ours',
      store,
      env: oursEnv({ users, redisUrl: store === 'redis' ? redisUrl : null, env: authenticated }),
    });
  return targets;
}

/** Keeps the targets BENCH_TARGETS names (all when empty). */
export function selected<T extends { name: string }>(targets: T[], filter: readonly string[]): T[] {
  return filter.length === 0 ? targets : targets.filter((t) => filter.some((f) => t.name.includes(f)));
}
