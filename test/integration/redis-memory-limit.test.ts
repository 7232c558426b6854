// Redis full under compose's noeviction keeps every budget (docs/operations.md#rediss-memory).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { RedisServer, skipUnlessRedisBinaries } from '../helpers/redis-server.ts';

after(closeTestDatabases);

const COMPOSE = fileURLToPath(new URL('../../compose.yaml', import.meta.url));
const GUESSER = '203.0.113.9';

/** The redis service's `command` in compose.yaml, without `redis-server`, its `${VAR:-default}`s at their defaults. */
export function composeRedisArguments(text = readFileSync(COMPOSE, 'utf8')): string[] {
  const service = /^ {2}redis:\n((?: {4}.*\n|\s*\n)*)/m.exec(text)?.[1];
  assert.ok(service, 'compose.yaml has a redis service');
  const line = /^ {4}command: (\[.*\])$/m.exec(service)?.[1];
  assert.ok(line, 'the redis service has a one-line command');
  const command = JSON.parse(line.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')) as string[];
  assert.equal(command[0], 'redis-server');
  return command.slice(1);
}

const skip = skipUnlessRedisBinaries();

describe('Redis as compose.yaml runs it, under a flood that fills it', { skip }, () => {
  it('has a memory limit and noeviction: no budget is evicted, and nothing is answered 5xx', async (t) => {
    const redis = await RedisServer.start({ args: composeRedisArguments() });
    t.after(() => redis.stop());
    const config = async (name: string) => (await redis.cli('CONFIG', 'GET', name)).split('\n')[1]!;
    const info = async (section: string, field: string) =>
      new RegExp(`^${field}:(.*)$`, 'm').exec(await redis.cli('INFO', section))?.[1]?.trim();
    assert.equal(await config('maxmemory-policy'), 'noeviction');
    assert.ok(Number(await config('maxmemory')) >= 64 * 1024 * 1024, 'a limit with room for the fleet');

    const test = await createTestApp({
      env: { REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '5000', RATE_LIMIT_LOGIN_IP: '3/15m' },
    });
    t.after(test.close);
    // An address spends its login budget before the flood.
    const guesser = test.client({ remoteAddress: GUESSER });
    for (let i = 0; i < 3; i++)
      assertError(await guesser.login('alice@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
    assertError(await guesser.login('alice@example.com', 'wrong'), 429, 'LOGIN_RATE_LIMIT');
    const budget = await redis.cli('--scan', '--pattern', `*login-ip:${GUESSER}*`);
    assert.notEqual(budget, '');

    // The one change to the shipped configuration: a limit just above what Redis holds now, so
    // that the flood fills it in seconds rather than at 256 MB.
    const shipped = await config('maxmemory');
    const limit = Number(await info('memory', 'used_memory')) + 128 * 1024;
    await redis.cli('CONFIG', 'SET', 'maxmemory', String(limit));

    // Ever-new addresses, each with a pre-session asking for passkey options and a generic request,
    // until Redis refuses a write; then a hundred more, answered while it is full.
    const statuses = new Map<number, number>();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const refusedWrites = async () =>
      Number(/count=(\d+)/.exec((await info('errorstats', 'errorstat_OOM')) ?? '')?.[1] ?? 0);
    let fullAt: number | null = null;
    for (let i = 0; i < 20_000 && (fullAt === null || i < fullAt + 100); i++) {
      const client = test.client({ remoteAddress: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
      await client.fetchCsrf();
      count((await client.request({ method: 'POST', url: '/api/auth/passkey/options' })).statusCode);
      count((await client.get('/api/auth/me')).statusCode);
      if (fullAt === null && i % 20 === 0 && (await refusedWrites()) > 0) fullAt = i;
    }
    t.diagnostic(
      `Redis full after ${fullAt} addresses; answers: ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    assert.notEqual(fullAt, null, 'the flood filled Redis: it refused a write (OOM)');
    assert.deepEqual(
      [...statuses.keys()].filter((status) => status >= 500),
      [],
      'no answer was a 5xx: the instance enforced the budgets itself meanwhile',
    );
    assert.equal(await info('stats', 'evicted_keys'), '0');
    assert.equal(
      await redis.cli('--scan', '--pattern', `*login-ip:${GUESSER}*`),
      budget,
      'the budget is kept',
    );

    // Room again (the flood's challenges expire within 5 minutes): the instance is back on Redis,
    // and the budget spent before the flood still refuses the guesser, on every instance.
    await redis.cli('CONFIG', 'SET', 'maxmemory', shipped);
    test.clock.advance(5000);
    const ready = await test.client().get('/readyz');
    assert.equal(ready.json<{ redis: string }>().redis, 'up', ready.body);
    assertError(await guesser.login('alice@example.com', 'wrong'), 429, 'LOGIN_RATE_LIMIT');
  });
});
