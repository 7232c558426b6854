// Redis memory per key the service writes: passkey challenges (a flood of options), generic and login budgets, on a private redis-server.
// Run: node bench/experiments/redis-memory.ts [challenges]   (default 20,000; prints a table and JSON)
import { createTestApp } from '../../test/helpers/app.ts';
import { closeTestDatabases } from '../../test/helpers/database.ts';
import { RedisServer } from '../../test/helpers/redis-server.ts';

const CHALLENGES = Number(process.argv[2] ?? 20_000);
const ADDRESSES = 5_000;

interface Row {
  readonly what: string;
  readonly keys: number;
  /** used_memory's growth over the run, per key (allocator overhead, the keyspace's growth included). */
  readonly bytesPerKey: number;
  /** MEMORY USAGE of one such key (its own allocation only). */
  readonly memoryUsage: number;
  readonly sample: string;
}

const redis = await RedisServer.start();
const test = await createTestApp({
  env: {
    REDIS_URL: redis.url,
    // A busy machine must not send a key to the local fallback store instead (it would go uncounted).
    REDIS_COMMAND_TIMEOUT_MS: '5000',
  },
});
const used = async () => Number(/used_memory:(\d+)/.exec(await redis.cli('INFO', 'memory'))![1]);
const size = async () => Number(await redis.cli('DBSIZE'));

/** Runs `work`, then reports the keys matching `pattern` it added and the memory they took. */
async function measure(what: string, pattern: string, work: () => Promise<void>): Promise<Row> {
  const [memoryBefore, keysBefore] = [await used(), await size()];
  await work();
  const keys = (await size()) - keysBefore;
  if (keys === 0) throw new Error(`${what}: no key reached Redis (the store fell back to local?)`);
  const sample = await firstKey(pattern);
  return {
    what,
    keys,
    bytesPerKey: Math.round(((await used()) - memoryBefore) / keys),
    memoryUsage: Number(await redis.cli('MEMORY', 'USAGE', sample)),
    sample,
  };
}

/** One key matching `pattern` (SCAN until one comes). */
async function firstKey(pattern: string): Promise<string> {
  let cursor = '0';
  do {
    const [next, ...keys] = (await redis.cli('SCAN', cursor, 'MATCH', pattern, 'COUNT', '1000')).split('\n');
    if (keys.length > 0 && keys[0]) return keys[0];
    cursor = next!;
  } while (cursor !== '0');
  throw new Error(`no key matches ${pattern}`);
}

const rows: Row[] = [];
rows.push(
  await measure('passkey sign-in challenge', '*once:passkey-get*', async () => {
    const browser = test.client();
    await browser.fetchCsrf();
    for (let i = 0; i < CHALLENGES; i++) {
      const answer = await browser.request({ method: 'POST', url: '/api/auth/passkey/options' });
      if (answer.statusCode !== 200) throw new Error(`options answered ${answer.statusCode}: ${answer.body}`);
    }
  }),
);
rows.push(
  await measure('api-unauthenticated budget (one address)', '*api-unauthenticated*', async () => {
    for (let i = 0; i < ADDRESSES; i++)
      await test.client({ remoteAddress: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` }).get('/api/auth/me');
  }),
);
rows.push(
  await measure(
    'login-ip, login-account budgets (a failed login: new address, new email)',
    '*login-ip*',
    async () => {
      for (let i = 0; i < ADDRESSES; i++) {
        const client = test.client({ remoteAddress: `10.100.${i >> 8}.${i & 255}` });
        await client.login(`nobody-${i}@example.com`, 'wrong password');
      }
    },
  ),
);

console.table(
  rows.map((row) => ({
    what: row.what,
    keys: row.keys,
    'bytes/key (used_memory)': row.bytesPerKey,
    'MEMORY USAGE': row.memoryUsage,
  })),
);
console.log(
  JSON.stringify({ redis: (await redis.cli('INFO', 'server')).match(/redis_version:(\S+)/)?.[1], rows }),
);
await test.close();
await closeTestDatabases();
await redis.stop();
