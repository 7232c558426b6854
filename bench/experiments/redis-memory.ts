// Redis memory of passkey challenges: one per browser as the ceremonies store them, up to the cap.
// Run: node bench/experiments/redis-memory.ts [challenges]   (default MARKS_MAX, the cap of one scope; budgets: capacity.ts)
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { PASSKEY_CHALLENGE_TTL_MS } from '../../src/auth/passkeys.ts';
import { digest } from '../../src/auth/tokens.ts';
import { loadConfig } from '../../src/config.ts';
import { createRedisClient, RedisStore } from '../../src/rate-limit/stores/redis-store.ts';
import { MARKS_MAX } from '../../src/rate-limit/stores/store.ts';
import { openBenchRedis } from '../lib/redis.ts';

interface ChallengeMemory {
  readonly redis: string;
  readonly challenges: number;
  /** used_memory's growth per challenge kept (the keyspace's own growth included). */
  readonly bytesPerChallenge: number;
  /** MEMORY USAGE of the scope's keys, per challenge. */
  readonly memoryUsagePerChallenge: number;
  /** used_memory's growth in all, MB. */
  readonly totalMB: number;
  /** Whether one more browser was refused (the scope full) rather than another's challenge dropped. */
  readonly refusedPastCap: boolean | null;
}

const PARALLEL = 64;
const SCOPE = 'passkey-get';

/** Puts `count` challenges of as many browsers into a fresh store and reads what Redis spent. */
async function measure(url: string, count: number): Promise<ChallengeMemory> {
  const config = loadConfig({ NODE_ENV: 'test', REDIS_URL: url });
  const store = new RedisStore({
    client: createRedisClient(config.redis),
    keyPrefix: 'bench-memory:',
    timeoutMs: 5000,
  });
  const admin = new Redis(url);
  const used = async () => Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);
  const put = () =>
    store.putOnce(
      SCOPE,
      digest(randomBytes(32).toString('base64url')),
      digest(randomBytes(32).toString('base64url')),
      PASSKEY_CHALLENGE_TTL_MS,
    );
  try {
    await store.ready(5000);
    const before = await used();
    for (let done = 0; done < count; done += PARALLEL) {
      const waits = await Promise.all(Array.from({ length: Math.min(PARALLEL, count - done) }, put));
      if (waits.some((wait) => wait !== 0))
        throw new Error(`a challenge was refused after ${done}: the cap is lower`);
    }
    const grown = (await used()) - before;
    const keys = await admin.keys('bench-memory:*');
    const usage = await Promise.all(keys.map((key) => admin.memory('USAGE', key, 'SAMPLES', 0)));
    const refusedPastCap = count >= MARKS_MAX ? (await put()) > 0 : null;
    return {
      redis: /^redis_version:(\S+)/m.exec(await admin.info('server'))![1]!,
      challenges: count,
      bytesPerChallenge: Math.round(grown / count),
      memoryUsagePerChallenge: Math.round(
        usage.reduce<number>((sum, size) => sum + Number(size ?? 0), 0) / count,
      ),
      totalMB: Math.round(grown / 1e5) / 10,
      refusedPastCap,
    };
  } finally {
    await store.close();
    admin.disconnect();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const count = Number(process.argv[2] ?? MARKS_MAX);
  const redis = await openBenchRedis(null, null);
  if (!redis) throw new Error('redis-server could not be started');
  try {
    const result = await measure(redis.url, count);
    console.table([result]);
    console.log(JSON.stringify(result));
  } finally {
    await redis.stop();
  }
}
