// Two instances sharing one Redis and one PostgreSQL behave as one service: one budget per key, one session.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { CSRF_COOKIE } from '../../src/http/plugins/csrf.ts';
import { SESSION_COOKIE } from '../../src/http/session-cookie.ts';
import { createTestApp, type Response, TestClient, testConfig } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { answeredOnClock } from '../helpers/http.ts';
import { uniquePrefix } from '../helpers/redis.ts';
import { REDIS_URL, skipUnless } from '../helpers/services.ts';

const skip = (await skipUnless('redis')) || (await skipUnless('postgres'));
after(closeTestDatabases);

interface Instances {
  readonly a: FastifyInstance;
  readonly b: FastifyInstance;
  /** A client of instance A (its own address unless given). */
  clientOfA(remoteAddress?: string): TestClient;
}

let nextAddress = 1;
const address = () => `203.0.113.${nextAddress++}`;

/**
 * Instance A and instance B, each built from the environment as `npm start` would build it: its
 * own Redis connection (same REDIS_URL and key prefix) and, for B, its own PostgreSQL pool on A's
 * database. `closed` mode and a generous timeout: a Redis problem shows up as a 503 in the
 * assertions instead of silently turning into a per-instance budget.
 */
async function twoInstances(
  t: TestContext,
  env: Record<string, string>,
  clocks: [ManualClock, ManualClock] = [new ManualClock(), new ManualClock()],
): Promise<Instances> {
  const shared = {
    REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix(),
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    RATE_LIMIT_STORE_FAILURE: 'closed',
    ...env,
  };
  const first = await createTestApp({ database: 'postgres', env: shared, clock: clocks[0] });
  t.after(() => first.close());
  const b = await buildApp(testConfig({ ...shared, DATABASE_URL: first.database.url! }), {
    clock: clocks[1],
  });
  t.after(() => b.close());
  await b.ready();
  return {
    a: first.app,
    b,
    clientOfA: (remoteAddress = address()) => new TestClient(first.app, remoteAddress),
  };
}

/** The same browser (cookies, CSRF token, address) talking to another instance. */
function sameBrowserOn(app: FastifyInstance, client: TestClient): TestClient {
  const twin = new TestClient(app, client.remoteAddress);
  for (const name of [SESSION_COOKIE, CSRF_COOKIE]) {
    const value = client.cookie(name);
    if (value !== undefined) twin.setCookie(name, value);
  }
  twin.csrfToken = client.csrfToken;
  return twin;
}

/** Sends `count` requests at once, alternating between the two clients; returns the statuses. */
async function splitBurst(
  clients: readonly [TestClient, TestClient],
  count: number,
  send: (client: TestClient) => Promise<Response>,
): Promise<Response[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => send(clients[i % 2]!)));
}

const tally = (responses: readonly Response[]) => {
  const counts: Record<string, number> = {};
  for (const r of responses) {
    const key = r.statusCode === 429 ? `429 ${r.json().code}` : String(r.statusCode);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
};

const bulk = (client: TestClient) =>
  client.request({
    method: 'PATCH',
    url: '/api/employee/tasks/bulk',
    payload: { taskIds: [1, 2], assigneeId: 2 },
  });

describe('two instances, one Redis, one PostgreSQL', { skip }, () => {
  it('N concurrent bulk requests of one user, split over both, admit exactly the bulk budget', async (t) => {
    const { b, clientOfA } = await twoInstances(t, { RATE_LIMIT_BULK: '5/15m' });
    const alice = clientOfA();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const responses = await splitBurst([alice, sameBrowserOn(b, alice)], 24, bulk);
    assert.deepEqual(tally(responses), { 200: 5, '429 TASK_BULK_RATE_LIMIT': 19 });
  });

  it('the generic bucket: authenticated (per user) and unauthenticated (per address) are shared', async (t) => {
    const { b, clientOfA } = await twoInstances(t, {
      RATE_LIMIT_AUTHENTICATED: '7/15m',
      RATE_LIMIT_UNAUTHENTICATED: '6/15m',
    });
    const bob = clientOfA();
    assert.equal((await bob.login('bob@example.com')).statusCode, 200);
    const signedIn = await splitBurst([bob, sameBrowserOn(b, bob)], 20, (c) => c.get('/api/auth/me'));
    assert.deepEqual(tally(signedIn), { 200: 7, '429 API_RATE_LIMIT_AUTHENTICATED': 13 });

    const stranger = clientOfA();
    const anonymous = await splitBurst([stranger, sameBrowserOn(b, stranger)], 20, (c) =>
      c.get('/api/employee/tasks'),
    );
    assert.deepEqual(tally(anonymous), { 401: 6, '429 API_RATE_LIMIT_UNAUTHENTICATED': 14 });
  });

  it('parallel failed logins for one account, over both instances, count exactly the account budget', async (t) => {
    const clocks: [ManualClock, ManualClock] = [new ManualClock(), new ManualClock()];
    const { a, b } = await twoInstances(t, { RATE_LIMIT_LOGIN_ACCOUNT: '4/15m' }, clocks);
    // Every attempt from its own address, so that only the account budget can refuse (or the
    // gate, past the 5 attempts of one account it takes at once: a 429 too, held on its clock).
    const attempts = Array.from({ length: 16 }, (_, i) => new TestClient(i % 2 ? a : b, address()));
    await Promise.all(attempts.map((client) => client.fetchCsrf()));
    const logins = attempts.map((client) => client.login(' Carol@Example.com', 'wrong-password'));
    const responses = await answeredOnClock(clocks[0], [answeredOnClock(clocks[1], logins)]).then(
      ([all]) => all!,
    );
    assert.deepEqual(tally(responses), { 401: 4, '429 LOGIN_RATE_LIMIT': 12 });
    const right = await new TestClient(a, address()).login('carol@example.com');
    assert.equal(right.statusCode, 429, 'over the budget even the right password waits');
  });

  it('instances whose clocks are minutes apart still share one exact window (time from Redis)', async (t) => {
    // B's clock runs 5 minutes ahead: with instance time, A's admissions would have left B's
    // 1-minute window long ago, and B would admit the whole budget again.
    const now = Date.now();
    const { b, clientOfA } = await twoInstances(t, { RATE_LIMIT_BULK: '4/1m' }, [
      new ManualClock(now),
      new ManualClock(now + 5 * 60_000),
    ]);
    const alice = clientOfA();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const aliceOnB = sameBrowserOn(b, alice);
    for (const client of [alice, alice, aliceOnB, aliceOnB])
      assert.equal((await bulk(client)).statusCode, 200);
    const [refusedOnA, refusedOnB] = [await bulk(alice), await bulk(aliceOnB)];
    assert.deepEqual([refusedOnA.statusCode, refusedOnB.statusCode], [429, 429]);
    const waits = [refusedOnA, refusedOnB].map((r) => Number(r.headers['retry-after']));
    assert.ok(
      waits.every((w) => w >= 58 && w <= 60),
      `both instances count the same minute: Retry-After ${waits}`,
    );
  });

  it('a session made on one instance is valid on the other, and a logout on either ends it on both', async (t) => {
    const { b, clientOfA } = await twoInstances(t, {});
    const carol = clientOfA();
    assert.equal((await carol.login('carol@example.com')).statusCode, 200);
    const carolOnB = sameBrowserOn(b, carol);
    const me = await carolOnB.get('/api/auth/me');
    assert.equal(me.statusCode, 200);
    assert.equal(me.json<{ user: { email: string } }>().user.email, 'carol@example.com');
    // The CSRF token is bound to the session, so B accepts A's token for an unsafe request.
    assert.equal((await bulk(carolOnB)).statusCode, 200);

    const logout = await carolOnB.request({ method: 'POST', url: '/api/auth/logout' });
    assert.equal(logout.statusCode, 204);
    // A still holds the old cookie: the session is gone on the server, so A refuses it too.
    assert.equal((await carol.get('/api/auth/me')).statusCode, 401);
  });
});

describe('two instances and one Idempotency-Key', { skip }, () => {
  /** A keyed bulk reassignment by `client`. */
  const keyedBulk = (client: TestClient, key: string, payload: { taskIds: number[]; assigneeId: number }) =>
    client.request({
      method: 'PATCH',
      url: '/api/employee/tasks/bulk',
      payload,
      headers: { 'idempotency-key': key },
    });
  /** What is left of alice's bulk budget, as each instance reports it. */
  const bulkRemaining = async (apps: readonly FastifyInstance[], alice: TestClient) => {
    const left = [];
    for (const app of apps) {
      const budget = await sameBrowserOn(app, alice).get('/api/rate-limits');
      left.push(
        budget
          .json<{ controls: { control: string; remaining: number }[] }>()
          .controls.find((c) => c.control === 'task-bulk')?.remaining,
      );
    }
    return left;
  };

  it('20 copies of one keyed bulk request, split over both at once, are applied once; the first and the copies past ten free repeats are charged', async (t) => {
    const { a, b, clientOfA } = await twoInstances(t, { RATE_LIMIT_BULK: '30/15m' });
    const alice = clientOfA();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const key = randomUUID();
    const payload = { taskIds: [51, 52, 53], assigneeId: 3 };
    const keyed = (client: TestClient) => keyedBulk(client, key, payload);
    const responses = await splitBurst([alice, sameBrowserOn(b, alice)], 20, keyed);
    const first = responses.filter(
      (r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined,
    );
    assert.equal(first.length, 1, `one request applied the key: ${JSON.stringify(tally(responses))}`);
    for (const response of responses) {
      assert.ok(
        [200, 409].includes(response.statusCode),
        `200 or 409, got ${response.statusCode} ${response.body}`,
      );
      if (response.statusCode === 200) assert.deepEqual(response.json(), first[0]!.json());
      else assert.equal(response.json().code, 'IDEMPOTENCY_KEY_IN_FLIGHT');
    }
    // The first copy, and the nine repeats past the ten free ones, spent a unit each (copies that
    // found the key free were charged, and got the unit back when they lost the claim to the first).
    assert.deepEqual(await bulkRemaining([a, b], alice), [20, 20]);
    // Applied once: one stored answer, and the copies still in flight then get it now from either instance.
    for (const client of [alice, sameBrowserOn(b, alice)]) {
      const late = await keyed(client);
      assert.equal(late.statusCode, 200);
      assert.equal(late.headers['idempotent-replayed'], 'true');
    }
    assert.deepEqual(await bulkRemaining([a, b], alice), [18, 18], 'repeats past ten are charged');
  });

  it('spares exactly ten repeats of a key when both instances race for the last free ones, and refuses the rest once the budget is spent', async (t) => {
    for (let trial = 0; trial < 5; trial++) {
      const { a, b, clientOfA } = await twoInstances(t, { RATE_LIMIT_BULK: '6/15m' });
      const alice = clientOfA();
      assert.equal((await alice.login('alice@example.com')).statusCode, 200);
      const onB = sameBrowserOn(b, alice);
      const key = randomUUID();
      const payload = { taskIds: [61, 62], assigneeId: 2 };
      assert.equal((await keyedBulk(alice, key, payload)).statusCode, 200);
      for (let i = 0; i < 7; i++) {
        const repeat = await keyedBulk(i % 2 ? onB : alice, key, payload);
        assert.equal(repeat.headers['idempotent-replayed'], 'true');
      }
      // Three free repeats left, twelve copies at once over both instances, five units left:
      // three are spared, five are charged, four are refused, and nothing else is counted.
      const responses = await splitBurst([alice, onB], 12, (client) => keyedBulk(client, key, payload));
      assert.deepEqual(tally(responses), { 200: 8, '429 TASK_BULK_RATE_LIMIT': 4 }, `trial ${trial}`);
      assert.ok(responses.every((r) => r.statusCode !== 200 || r.headers['idempotent-replayed'] === 'true'));
      assert.deepEqual(await bulkRemaining([a, b], alice), [0, 0]);
    }
  });
});
