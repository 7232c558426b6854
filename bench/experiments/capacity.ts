// What each control costs Redis: CPU per decision (INFO commandstats, INFO cpu), memory per tracked key.
// Run: node bench/experiments/capacity.ts
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.ts';
import { CONTROLS } from '../../src/rate-limit/policy.ts';
import { LOG_MAX_LIMIT } from '../../src/rate-limit/sliding-window.ts';
import { createRedisClient, RedisStore } from '../../src/rate-limit/stores/redis-store.ts';
import { openBenchRedis } from '../lib/redis.ts';

interface CapacityRow {
  readonly control: string;
  readonly budget: string;
  /** `log` (one time per admission) or `buckets` (fixed counters), as sliding-window.ts chooses. */
  readonly shape: 'log' | 'buckets';
  readonly decisions: number;
  /** INFO commandstats usec_per_call of EVALSHA: the script's own run time. */
  readonly scriptMicros: number;
  /** INFO cpu (user + sys) of the whole server per decision: the script plus parsing and I/O. */
  readonly serverCpuMicros: number;
  /** MEMORY USAGE of one key holding a full window (mean over a sample). */
  readonly bytesPerKey: number;
}

const KEYS_PER_CONTROL = 400;
/** Admissions per key: a full log, or enough counts to give the buckets their widest numbers. */
const FILL_CAP = 64;
const PARALLEL = 64;

/** Fills KEYS_PER_CONTROL keys of every control at the default budgets and reads what Redis spent. */
async function measureCapacity(url: string): Promise<CapacityRow[]> {
  const config = loadConfig({ NODE_ENV: 'test', REDIS_URL: url });
  const client = createRedisClient(config.redis);
  const store = new RedisStore({
    client,
    keyPrefix: 'bench-capacity:',
    timeoutMs: config.redis.commandTimeoutMs,
  });
  const admin = new Redis(url);
  const rows: CapacityRow[] = [];
  try {
    await store.ready(5000);
    for (const control of Object.values(CONTROLS)) {
      const budget = control.budget(config.rateLimits);
      const rule = { name: control.name, limit: budget.limit, windowMs: budget.windowMs };
      const fill = Math.min(budget.limit, FILL_CAP);
      const keys = Array.from({ length: KEYS_PER_CONTROL }, (_, i) => `k${i}`);
      await store.consume(rule, 'warm-up'); // loads the script outside the measurement
      await admin.config('RESETSTAT');
      const cpuBefore = serverCpuSeconds(await admin.info('cpu'));
      const jobs = keys.flatMap((key) => Array.from({ length: fill }, () => key));
      for (let i = 0; i < jobs.length; i += PARALLEL) {
        await Promise.all(jobs.slice(i, i + PARALLEL).map((key) => store.consume(rule, key)));
      }
      const cpuAfter = serverCpuSeconds(await admin.info('cpu'));
      const evalsha = /cmdstat_evalsha:calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/.exec(
        await admin.info('commandstats'),
      );
      const sample = keys.filter((_, i) => i % 20 === 0).map((key) => store.keyOf(rule, key));
      const sizes = await Promise.all(sample.map((key) => admin.memory('USAGE', key, 'SAMPLES', 0)));
      rows.push({
        control: control.name,
        budget: `${budget.limit}/${budget.windowMs / 60_000}m`,
        shape: budget.limit <= LOG_MAX_LIMIT ? 'log' : 'buckets',
        decisions: jobs.length,
        scriptMicros: Number(evalsha?.[3] ?? Number.NaN),
        serverCpuMicros: ((cpuAfter - cpuBefore) * 1e6) / jobs.length,
        bytesPerKey: sizes.reduce<number>((sum, size) => sum + Number(size ?? 0), 0) / sizes.length,
      });
    }
  } finally {
    await store.close();
    admin.disconnect();
  }
  return rows;
}

function serverCpuSeconds(info: string): number {
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const redis = await openBenchRedis(process.env.BENCH_REDIS_URL || null, null);
  if (!redis) throw new Error('no Redis: start redis-server or set BENCH_REDIS_URL');
  try {
    console.table(await measureCapacity(redis.url));
  } finally {
    await redis.stop();
  }
}
