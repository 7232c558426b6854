// docs/rules.md#rate-limits and #reading-the-budgets over HTTP: limits, keys, headers, exemptions.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createTestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertNoRateLimitHeaders, assertRefused, rateLimitHeaders } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

const bulk = (client: TestClient, taskIds: unknown = [1, 2], assigneeId: unknown = 2) =>
  client.request({ method: 'PATCH', url: '/api/employee/tasks/bulk', payload: { taskIds, assigneeId } });

type Report = {
  control: string;
  limit: number;
  remaining: number;
  resetSeconds: number;
  windowSeconds: number;
};
const budgets = async (client: TestClient) =>
  new Map(
    (await client.get('/api/rate-limits'))
      .json<{ controls: Report[] }>()
      .controls.map((c) => [c.control, c] as const),
  );

describe('PATCH /api/employee/tasks/bulk under the bulk limiter', () => {
  it('admits the budget with exact headers, then answers 429 TASK_BULK_RATE_LIMIT', async (t) => {
    const { client, clock, close } = await createTestApp({ env: { RATE_LIMIT_BULK: '3/1m' } });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    for (const remaining of [2, 1]) {
      const headers = rateLimitHeaders(await bulk(alice));
      assert.deepEqual([headers.limit, headers.remaining, headers.reset], [3, remaining, 0]);
      assert.deepEqual(headers.policy, { name: 'task-bulk', q: 3, w: 60 });
      assert.equal(headers.retryAfter, null, 'no Retry-After on a 200');
    }
    clock.advance(20_000);
    const last = rateLimitHeaders(await bulk(alice));
    assert.deepEqual([last.remaining, last.reset], [0, 40], 'the first unit frees 60 s after it was spent');
    clock.advance(1_500);
    const refused = assertRefused(await bulk(alice), 'TASK_BULK_RATE_LIMIT', 'task-bulk');
    assert.equal(refused.retryAfter, 39, 'rounded up from 38.5 s');
    clock.advance(refused.retryAfter! * 1000);
    assert.equal((await bulk(alice)).statusCode, 200, 'a client that waits Retry-After is admitted');
  });

  it('counts requests answered 400, 403 and 422 too', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_BULK: '3/1m' } });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    assert.equal((await bulk(alice, 'nope')).statusCode, 400);
    assert.equal((await bulk(alice, [1], 4)).statusCode, 422);
    const forged = await alice.request({
      method: 'PATCH',
      url: '/api/employee/tasks/bulk',
      payload: { taskIds: [1], assigneeId: 2 },
      headers: { 'x-csrf-token': 'forged' },
    });
    assert.equal(forged.statusCode, 403);
    assertRefused(await bulk(alice), 'TASK_BULK_RATE_LIMIT', 'task-bulk');
  });

  it('keys signed-in callers by user, so users behind one address do not share a budget', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_BULK: '1/1m' } });
    t.after(close);
    const alice = client({ remoteAddress: '192.0.2.10' });
    const bob = client({ remoteAddress: '192.0.2.10' });
    await alice.login('alice@example.com');
    await bob.login('bob@example.com');
    assert.equal((await bulk(alice)).statusCode, 200);
    assertRefused(await bulk(alice), 'TASK_BULK_RATE_LIMIT', 'task-bulk');
    assert.equal((await bulk(bob)).statusCode, 200);
  });

  it('keys unauthenticated callers by address (their 401s count)', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_BULK: '2/1m' } });
    t.after(close);
    const stranger = client();
    await stranger.fetchCsrf();
    assert.equal((await bulk(stranger)).statusCode, 401);
    assert.equal((await bulk(stranger)).statusCode, 401);
    assertRefused(await bulk(stranger), 'TASK_BULK_RATE_LIMIT', 'task-bulk');
    const neighbour = client();
    await neighbour.fetchCsrf();
    assert.equal((await bulk(neighbour)).statusCode, 401, 'another address has its own budget');
  });

  it('never touches a generic bucket, and is not blocked by an exhausted one', async (t) => {
    const { client, close } = await createTestApp({
      env: { RATE_LIMIT_BULK: '5/1m', RATE_LIMIT_AUTHENTICATED: '2/1m' },
    });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    for (let i = 0; i < 3; i++) assert.equal((await bulk(alice)).statusCode, 200);
    const before = await budgets(alice);
    assert.equal(before.get('api-authenticated')!.remaining, 2, 'three bulk requests spent no generic unit');
    assert.equal(before.get('task-bulk')!.remaining, 2);
    await alice.get('/api/auth/me');
    await alice.get('/api/auth/me');
    assertRefused(await alice.get('/api/auth/me'), 'API_RATE_LIMIT_AUTHENTICATED', 'api-authenticated');
    const stillOpen = await bulk(alice);
    assert.equal(stillOpen.statusCode, 200);
    assert.equal(rateLimitHeaders(stillOpen).policy.name, 'task-bulk');
  });
});

describe('generic buckets', () => {
  it('limits a signed-in caller per user with API_RATE_LIMIT_AUTHENTICATED; other users are unaffected', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_AUTHENTICATED: '3/1m' } });
    t.after(close);
    const alice = client({ remoteAddress: '192.0.2.20' });
    const bob = client({ remoteAddress: '192.0.2.20' });
    await alice.login('alice@example.com');
    await bob.login('bob@example.com');
    const first = rateLimitHeaders(await alice.get('/api/employee/tasks?limit=1'));
    assert.deepEqual([first.policy.name, first.limit, first.remaining], ['api-authenticated', 3, 2]);
    await alice.get('/api/employee/employees');
    await alice.get('/api/employee/tasks/1');
    assertRefused(await alice.get('/api/auth/me'), 'API_RATE_LIMIT_AUTHENTICATED', 'api-authenticated');
    assert.equal((await bob.get('/api/auth/me')).statusCode, 200);
  });

  it('limits an unauthenticated caller per address with API_RATE_LIMIT_UNAUTHENTICATED, 404s included', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '2/1m' } });
    t.after(close);
    const stranger = client();
    const notFound = await stranger.get('/api/no-such-route');
    assert.equal(notFound.statusCode, 404);
    assert.equal(rateLimitHeaders(notFound).policy.name, 'api-unauthenticated');
    assert.equal((await stranger.get('/api/auth/me')).statusCode, 401);
    assertRefused(
      await stranger.get('/api/employee/tasks'),
      'API_RATE_LIMIT_UNAUTHENTICATED',
      'api-unauthenticated',
    );
    assert.equal((await client().get('/api/auth/me')).statusCode, 401, 'another address is not limited');
  });

  it('refuses before doing any other work: a refused logout does not log out', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_AUTHENTICATED: '1/1m' } });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    await alice.get('/api/auth/me');
    const refusedLogout = await alice.request({ method: 'POST', url: '/api/auth/logout', csrf: false });
    assertRefused(refusedLogout, 'API_RATE_LIMIT_AUTHENTICATED', 'api-authenticated');
    assert.equal(
      (await budgets(alice)).get('api-authenticated')!.remaining,
      0,
      'the session is still signed in',
    );
  });

  it('leaves routes outside /api alone', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m' } });
    t.after(close);
    const stranger = client();
    for (let i = 0; i < 3; i++) assertNoRateLimitHeaders(await stranger.get('/healthz'));
  });
});

describe('the login entry path under generic pressure', () => {
  it('keeps GET /api/csrf-token and POST /api/auth/login open when the unauthenticated bucket is spent', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '2/1m' } });
    t.after(close);
    const visitor = client();
    await visitor.get('/api/auth/me');
    await visitor.get('/api/auth/me');
    assertRefused(await visitor.get('/api/auth/me'), 'API_RATE_LIMIT_UNAUTHENTICATED', 'api-unauthenticated');
    for (let i = 0; i < 5; i++) {
      const token = await visitor.get('/api/csrf-token');
      assert.equal(token.statusCode, 200);
      assertNoRateLimitHeaders(token);
    }
    visitor.csrfToken = (await visitor.get('/api/csrf-token')).json<{ csrfToken: string }>().csrfToken;
    const wrong = await visitor.login('alice@example.com', 'not-the-password');
    assert.equal(
      wrong.json<{ code: string }>().code,
      'INVALID_CREDENTIALS',
      'never LOGIN_RATE_LIMIT from generic pressure',
    );
    assert.equal((await visitor.login('alice@example.com')).statusCode, 200);
    assert.equal(
      (await visitor.get('/api/auth/me')).statusCode,
      200,
      'signed in, the per-user bucket applies',
    );
  });

  it('keeps the login path open when the authenticated bucket is spent', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_AUTHENTICATED: '1/1m' } });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    await alice.get('/api/auth/me');
    assertRefused(await alice.get('/api/auth/me'), 'API_RATE_LIMIT_AUTHENTICATED', 'api-authenticated');
    assert.equal((await alice.get('/api/csrf-token')).statusCode, 200);
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
  });
});

describe('GET /api/rate-limits', () => {
  it('reports every control of an unauthenticated caller without spending anything', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '5/1m' } });
    t.after(close);
    const stranger = client();
    await stranger.get('/api/auth/me');
    for (let i = 0; i < 10; i++) {
      const response = await stranger.get('/api/rate-limits');
      assert.equal(response.statusCode, 200);
      assertNoRateLimitHeaders(response);
    }
    const report = await budgets(stranger);
    assert.deepEqual([...report.keys()].sort(), [
      'api-unauthenticated',
      'login-ip',
      'passkey-options',
      'task-bulk',
    ]);
    assert.deepEqual(report.get('api-unauthenticated'), {
      control: 'api-unauthenticated',
      code: 'API_RATE_LIMIT_UNAUTHENTICATED',
      mode: 'enforce',
      limit: 5,
      windowSeconds: 60,
      remaining: 4,
      resetSeconds: 0,
    });
  });

  it('reports a signed-in caller’s bulk budget and its reset once spent', async (t) => {
    const { client, clock, close } = await createTestApp({ env: { RATE_LIMIT_BULK: '2/15m' } });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    await bulk(alice);
    clock.advance(60_000);
    await bulk(alice);
    const report = await budgets(alice);
    assert.deepEqual([...report.keys()].sort(), [
      'api-authenticated',
      'login-account',
      'login-device',
      'login-ip',
      'passkey-options',
      'task-bulk',
      'task-import',
    ]);
    assert.equal(report.get('task-bulk')!.remaining, 0);
    assert.equal(report.get('task-bulk')!.resetSeconds, 840);
    assert.equal(report.get('task-bulk')!.windowSeconds, 900);
  });
});

describe('client addresses', () => {
  it('ignores a spoofed X-Forwarded-For when TRUST_PROXY is unset', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '2/1m' } });
    t.after(close);
    const attacker = client();
    for (const spoof of ['1.1.1.1', '2.2.2.2'])
      await attacker.get('/api/auth/me', { 'x-forwarded-for': spoof });
    assertRefused(
      await attacker.get('/api/auth/me', { 'x-forwarded-for': '3.3.3.3' }),
      'API_RATE_LIMIT_UNAUTHENTICATED',
      'api-unauthenticated',
    );
  });

  it('keys by the forwarded address when the peer is a trusted proxy', async (t) => {
    const { client, close } = await createTestApp({
      env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m', TRUST_PROXY: '10.0.0.0/8' },
    });
    t.after(close);
    const proxy = client({ remoteAddress: '10.0.0.1' });
    assert.equal((await proxy.get('/api/auth/me', { 'x-forwarded-for': '198.51.100.1' })).statusCode, 401);
    assert.equal((await proxy.get('/api/auth/me', { 'x-forwarded-for': '198.51.100.2' })).statusCode, 401);
    assertRefused(
      await proxy.get('/api/auth/me', { 'x-forwarded-for': '198.51.100.1' }),
      'API_RATE_LIMIT_UNAUTHENTICATED',
      'api-unauthenticated',
    );
  });

  it('takes the address one hop to the left per trusted hop (TRUST_PROXY=<hops>)', async (t) => {
    const { client, close } = await createTestApp({
      env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m', TRUST_PROXY: '2' },
    });
    t.after(close);
    const proxy = client({ remoteAddress: '10.0.0.1' });
    // Two hops: 10.0.0.1 (the peer) and 10.0.0.2 are proxies, 198.51.100.7 is the client; what lies
    // left of it is the client's own to write.
    const via = (chain: string) => proxy.get('/api/auth/me', { 'x-forwarded-for': chain });
    assert.equal((await via('1.1.1.1, 198.51.100.7, 10.0.0.2')).statusCode, 401);
    assertRefused(
      await via('2.2.2.2, 198.51.100.7, 10.0.0.2'),
      'API_RATE_LIMIT_UNAUTHENTICATED',
      'api-unauthenticated',
    );
    assert.equal((await via('1.1.1.1, 198.51.100.8, 10.0.0.2')).statusCode, 401, 'another client');
  });

  it('walks past trusted CIDRs from the right and stops at the first untrusted entry, garbage included', async (t) => {
    const { client, close } = await createTestApp({
      env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m', TRUST_PROXY: '10.0.0.0/8' },
    });
    t.after(close);
    const proxy = client({ remoteAddress: '10.0.0.1' });
    const via = (chain: string) => proxy.get('/api/auth/me', { 'x-forwarded-for': chain });
    assert.equal((await via('6.6.6.6, 198.51.100.7, 10.0.0.2')).statusCode, 401);
    assertRefused(
      await via('7.7.7.7, 198.51.100.7, 10.9.9.9'),
      'API_RATE_LIMIT_UNAUTHENTICATED',
      'api-unauthenticated',
    );
    // `unknown` is no address a proxy list can trust: the walk stops there, and what lies left of
    // it (which the client chose) is never the key.
    assert.equal((await via('198.51.100.20, unknown')).statusCode, 401);
    assertRefused(
      await via('198.51.100.21, unknown'),
      'API_RATE_LIMIT_UNAUTHENTICATED',
      'api-unauthenticated',
    );
  });

  it('groups IPv6 clients by /64 and keeps IPv4-mapped clients apart', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m' } });
    t.after(close);
    assert.equal((await client({ remoteAddress: '2001:db8:1:2::1' }).get('/api/auth/me')).statusCode, 401);
    assertRefused(
      await client({ remoteAddress: '2001:db8:1:2:ffff::9' }).get('/api/auth/me'),
      'API_RATE_LIMIT_UNAUTHENTICATED',
      'api-unauthenticated',
    );
    assert.equal(
      (await client({ remoteAddress: '2001:db8:1:3::1' }).get('/api/auth/me')).statusCode,
      401,
      'another /64',
    );
    assert.equal((await client({ remoteAddress: '::ffff:192.0.2.1' }).get('/api/auth/me')).statusCode, 401);
    assert.equal(
      (await client({ remoteAddress: '::ffff:192.0.2.2' }).get('/api/auth/me')).statusCode,
      401,
      'not one bucket for all IPv4',
    );
    assertRefused(
      await client({ remoteAddress: '192.0.2.1' }).get('/api/auth/me'),
      'API_RATE_LIMIT_UNAUTHENTICATED',
      'api-unauthenticated',
    );
  });
});
