// The bench's knobs, read from the environment once (BENCH_DURATION=3 BENCH_ROUNDS=1 for a smoke run).

/** A positive integer from the environment, or `fallback`. */
export const int = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
};

export const PHASES = [
  'throughput',
  'refusal',
  'redis-trips',
  'bulk',
  'memory',
  'footprint',
  'capacity',
  'flood',
] as const;
export type Phase = (typeof PHASES)[number];

const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);

/**
 * BENCH_QUICK=1: the regression guard to run before and after a hot-path change (under 2 minutes):
 * Fastify and ours on the memory store only, 4 rounds of 2 s + 3 s, printing ours ÷ Fastify. Each
 * round is a fresh process of each: four processes resolve a regression of about a microsecond
 * per request, not less (a process's figure is a draw, BENCHMARKS.md).
 */
const quick = process.env.BENCH_QUICK === '1';
/** The targets of a quick run, by exact name. */
export const QUICK_TARGETS = ['fastify-bare', 'ours-memory', 'ours-memory-quiet'] as const;

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
  /** Distinct keys for the memory-per-key measurement. */
  memoryKeys: int('BENCH_MEMORY_KEYS', 1_000_000),
  /** Only targets whose name contains one of these (comma list), e.g. BENCH_TARGETS=raw,ours. */
  targets: (process.env.BENCH_TARGETS ?? '').split(',').filter(Boolean),
  phases: (quick
    ? ['throughput']
    : only.length > 0
      ? PHASES.filter((p) => only.includes(p))
      : [...PHASES]) as Phase[],
  /** A Redis to use instead of starting a private redis-server (its INFO then includes others' traffic). */
  redisUrl: process.env.BENCH_REDIS_URL || null,
  databaseUrl: process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://127.0.0.1:5432/test',
});

export type Options = typeof options;
