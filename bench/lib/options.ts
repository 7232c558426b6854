// The bench's knobs, read from the environment once (BENCH_DURATION=3 BENCH_ROUNDS=1 for a smoke run).

/** A positive integer from the environment, or `fallback`. */
export const int = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
};

/**
 * BENCH_QUICK=1: the guard's three rows only (the floor, the Fastify stack and ours, in memory),
 * 4 rounds of 2 s + 3 s: a check before and after a hot-path change, in about two minutes.
 */
const quick = process.env.BENCH_QUICK === '1';
/** The targets of a quick run, by exact name. */
export const QUICK_TARGETS = ['fastify-contract', 'fastify-stack-memory', 'ours-memory'] as const;

export const options = Object.freeze({
  /** Seconds of each measured run. */
  duration: int('BENCH_DURATION', quick ? 3 : 6),
  /** Seconds of load before each measured run (not recorded). */
  warmup: int('BENCH_WARMUP', 2),
  /** Interleaved rounds, each on fresh processes: every target once per round; medians are over rounds. */
  rounds: int('BENCH_ROUNDS', quick ? 4 : 5),
  quick,
  connections: int('BENCH_CONNECTIONS', 50),
  users: int('BENCH_USERS', 1000),
  /** Decisions over which Redis commands are counted. */
  tripRequests: int('BENCH_TRIP_REQUESTS', 2000),
  /** Only targets whose name contains one of these (comma list), e.g. BENCH_TARGETS=stack,ours. */
  targets: (process.env.BENCH_TARGETS ?? '').split(',').filter(Boolean),
  /** Only these phases (comma list of names from bench/run.ts), e.g. BENCH_ONLY=targets. */
  only: (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean),
  /** A Redis to use instead of starting a private redis-server (its INFO then includes others' traffic). */
  redisUrl: process.env.BENCH_REDIS_URL || null,
});

export type Options = typeof options;
