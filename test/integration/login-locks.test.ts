// Known-device budgets and the admin's lock list over HTTP on a real Redis and a 3-master Redis Cluster.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import type { LoginLock } from '../../src/client/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { answeredOnClock } from '../helpers/http.ts';
import { uniquePrefix } from '../helpers/redis.ts';
import { RedisCluster, skipUnlessRedisBinaries } from '../helpers/redis-server.ts';
import { REDIS_URL, skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const WRONG = 'not-the-password';
const skipRedis = await skipUnless('redis');
const skipCluster = skipUnlessRedisBinaries();

type LockJson = LoginLock;

/*
 * Decisions take Redis's own clock (TIME), as in production, so waits are real seconds here; the
 * windows are 15 minutes and nothing in these tests waits for one to pass.
 */
function suite(name: string, skip: string | false, redisEnv: () => Record<string, string>) {
  describe(name, { skip }, () => {
    const app = async (t: { after(fn: () => Promise<void>): void }): Promise<TestApp> => {
      const testApp = await createTestApp({
        env: {
          ...redisEnv(),
          REDIS_KEY_PREFIX: uniquePrefix(),
          REDIS_COMMAND_TIMEOUT_MS: '2000',
          // A Redis problem must fail the test as a 503, never pass it on a per-instance budget.
          RATE_LIMIT_STORE_FAILURE: 'closed',
          RATE_LIMIT_LOGIN_ACCOUNT: '3/15m',
          RATE_LIMIT_LOGIN_IP: '4/15m',
          RATE_LIMIT_LOGIN_DEVICE: '5/15m',
        },
      });
      t.after(testApp.close);
      await testApp.database.db.query('UPDATE users SET devices_valid_after = NULL');
      return testApp;
    };

    it('never lets parallel wrong guesses from one known device exceed its budget', async (t) => {
      const { client, clock } = await app(t);
      const owner = client();
      assert.equal((await owner.login('carol@example.com')).statusCode, 200);
      const responses = await answeredOnClock(
        clock,
        Array.from({ length: 25 }, () => owner.login('carol@example.com', WRONG)),
      );
      const codes = responses.map((r) => r.json<{ code: string }>().code);
      assert.equal(codes.filter((c) => c === 'INVALID_CREDENTIALS').length, 5);
      assert.equal(codes.filter((c) => c === 'LOGIN_RATE_LIMIT').length, 20);
      assert.equal(
        responses.find((r) => r.statusCode === 429)?.headers['ratelimit-policy'],
        '"login-device";q=5;w=900',
      );
    });

    it('lists the locked account, address and device to an admin, and forgets the account at its reset', async (t) => {
      const { client } = await app(t);
      const carol = client();
      assert.equal((await carol.login('carol@example.com')).statusCode, 200);
      const device = carol.cookie(DEVICE_COOKIE)!.split('.')[1]!;
      for (let i = 0; i < 3; i++) await client().login('bob@example.com', WRONG);
      const sprayer = client({ remoteAddress: '203.0.113.78' });
      for (const email of ['x@example.com', 'y@example.com', 'z@example.com', 'w@example.com'])
        await sprayer.login(email, WRONG);
      for (let i = 0; i < 5; i++) await carol.login('carol@example.com', WRONG);
      const admin = client();
      assert.equal((await admin.login('admin@example.com')).statusCode, 200);

      const list = async () => {
        const response = await admin.get('/api/admin/login-locks');
        assert.equal(response.statusCode, 200, response.body);
        return response.json<{ locks: LockJson[] }>().locks;
      };
      const locks = await list();
      assert.deepEqual(
        locks.map(({ retryAfter: _, ...rest }) => rest),
        [
          { control: 'login-account', email: 'bob@example.com', failures: 3 },
          { control: 'login-ip', address: '203.0.113.78', failures: 4 },
          { control: 'login-device', device, failures: 5 },
        ],
      );
      for (const lock of locks)
        assert.ok(lock.retryAfter > 800 && lock.retryAfter <= 900, `${lock.retryAfter}`);

      const reset = await admin.request({
        method: 'POST',
        url: '/api/admin/login-locks/reset',
        payload: { email: 'bob@example.com' },
      });
      assert.equal(reset.statusCode, 204);
      assert.deepEqual(
        (await list()).map((lock) => lock.control),
        ['login-ip', 'login-device'],
      );
    });
  });
}

let cluster: RedisCluster | undefined;
before(async () => {
  if (!skipCluster) cluster = await RedisCluster.start();
});
after(() => cluster?.stop());

suite('login locks on Redis', skipRedis, () => ({ REDIS_URL }));
suite('login locks on Redis Cluster', skipCluster, () => ({ REDIS_CLUSTER_NODES: cluster!.nodeList }));
