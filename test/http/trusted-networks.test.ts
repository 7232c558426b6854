// RATE_LIMIT_TRUSTED_NETWORKS (docs/rules.md#deployment): direct and proxied, IPv4 and IPv6.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createTestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertNoRateLimitHeaders, assertRefused } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

const WRONG = 'not-the-password';
/** An office's IPv4 network and an IPv6 /48; the budgets small enough to spend in a test. */
const ENV = {
  RATE_LIMIT_TRUSTED_NETWORKS: '203.0.113.0/24, 2001:db8:1::/48',
  RATE_LIMIT_UNAUTHENTICATED: '3/15m',
  RATE_LIMIT_AUTHENTICATED: '3/15m',
  RATE_LIMIT_LOGIN_IP: '3/15m',
  RATE_LIMIT_LOGIN_ACCOUNT: '2/15m',
  RATE_LIMIT_LOGIN_DEVICE: '2/15m',
};

/** `count` signed-out GETs of /api/auth/me: each answer's status, or its 429 code. */
async function signedOutGets(client: TestClient, count: number, headers: Record<string, string> = {}) {
  const answers: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await client.get('/api/auth/me', headers);
    answers.push(
      response.statusCode === 429 ? response.json<{ code: string }>().code : String(response.statusCode),
    );
  }
  return answers;
}

describe('RATE_LIMIT_TRUSTED_NETWORKS, a client connecting directly', () => {
  for (const [family, office, outsider] of [
    ['IPv4', '203.0.113.7', '198.51.100.50'],
    ['IPv6', '2001:db8:1:ff::7', '2001:db8:2::7'],
  ] as const) {
    it(`leaves a signed-out ${family} caller of the network without the per-address generic budget`, async (t) => {
      const { client, close } = await createTestApp({ env: ENV });
      t.after(close);
      const inside = client({ remoteAddress: office });
      assert.deepEqual(await signedOutGets(inside, 6), Array(6).fill('401'));
      assertNoRateLimitHeaders(await inside.get('/api/auth/me'));
      const report = await inside.get('/api/rate-limits');
      assert.deepEqual(
        report.json<{ controls: { control: string }[] }>().controls.map((c) => c.control),
        ['task-bulk'],
        'neither per-address control is reported: neither applies',
      );
      const outside = client({ remoteAddress: outsider });
      assert.deepEqual(await signedOutGets(outside, 4), [
        '401',
        '401',
        '401',
        'API_RATE_LIMIT_UNAUTHENTICATED',
      ]);
    });

    it(`lets ${family} sign-ins of the network fail past the address's budget, each account still limited`, async (t) => {
      const { client, close } = await createTestApp({ env: ENV });
      t.after(close);
      // A Monday morning: many people, one address, some of them mistyping.
      const inside = client({ remoteAddress: office });
      for (let i = 1; i <= 6; i++) {
        const failure = await inside.login(`nobody${i}@example.com`, WRONG);
        assert.equal(failure.statusCode, 401, `failure ${i} is counted per account only`);
      }
      assert.equal((await inside.login('alice@example.com', WRONG)).statusCode, 401);
      assert.equal((await inside.login('alice@example.com', WRONG)).statusCode, 401);
      assertRefused(await inside.login('alice@example.com'), 'LOGIN_RATE_LIMIT', 'login-account');
      assert.equal((await client({ remoteAddress: office }).login('bob@example.com')).statusCode, 200);

      const outside = client({ remoteAddress: outsider });
      for (let i = 1; i <= 3; i++) await outside.login(`someone${i}@example.com`, WRONG);
      assertRefused(await outside.login('carol@example.com'), 'LOGIN_RATE_LIMIT', 'login-ip');
    });
  }

  it('keeps the per-user budget and the known-device rules for callers of the network', async (t) => {
    const { client, close } = await createTestApp({ env: ENV });
    t.after(close);
    const alice = client({ remoteAddress: '203.0.113.8' });
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const gets = [];
    for (let i = 0; i < 4; i++) gets.push(await alice.get('/api/auth/me'));
    assert.deepEqual(
      gets.map((r) => r.statusCode),
      [200, 200, 200, 429],
    );
    assertRefused(gets[3]!, 'API_RATE_LIMIT_AUTHENTICATED', 'api-authenticated');
    // Her browser is a known device now: its failures count per device, as anywhere else.
    await alice.request({ method: 'POST', url: '/api/auth/logout' });
    await alice.fetchCsrf();
    assert.equal((await alice.login('alice@example.com', WRONG)).statusCode, 401);
    assert.equal((await alice.login('alice@example.com', WRONG)).statusCode, 401);
    assertRefused(await alice.login('alice@example.com'), 'LOGIN_RATE_LIMIT', 'login-device');
  });
});

describe('RATE_LIMIT_TRUSTED_NETWORKS behind a trusted proxy (TRUST_PROXY)', () => {
  const PROXIED = { ...ENV, TRUST_PROXY: '10.0.0.0/8' };

  for (const [family, office, outsider] of [
    ['IPv4', '203.0.113.9', '198.51.100.60'],
    ['IPv6', '2001:db8:1:2::9', '2001:db8:2::9'],
  ] as const) {
    it(`matches the ${family} address the proxy forwards, not the proxy's own`, async (t) => {
      const { client, close } = await createTestApp({ env: PROXIED });
      t.after(close);
      const proxy = client({ remoteAddress: '10.0.0.1' });
      assert.deepEqual(
        await signedOutGets(proxy, 6, { 'x-forwarded-for': `192.0.2.1, ${office}` }),
        Array(6).fill('401'),
      );
      for (let i = 1; i <= 4; i++) {
        const viaProxy = client({ remoteAddress: '10.0.0.1' });
        await viaProxy.fetchCsrf();
        const failure = await viaProxy.request({
          method: 'POST',
          url: '/api/auth/login',
          headers: { 'x-forwarded-for': office },
          payload: { email: `nobody${i}@example.com`, password: WRONG },
        });
        assert.equal(failure.statusCode, 401);
      }
      assert.deepEqual(await signedOutGets(proxy, 4, { 'x-forwarded-for': outsider }), [
        '401',
        '401',
        '401',
        'API_RATE_LIMIT_UNAUTHENTICATED',
      ]);
    });
  }

  it('limits a client that only passes through a trusted network (its proxy), and one that writes a trusted address itself', async (t) => {
    const { client, close } = await createTestApp({
      env: { ...PROXIED, RATE_LIMIT_TRUSTED_NETWORKS: '10.0.0.0/8, 203.0.113.0/24' },
    });
    t.after(close);
    const proxy = client({ remoteAddress: '10.0.0.1' });
    assert.deepEqual(await signedOutGets(proxy, 4, { 'x-forwarded-for': '198.51.100.70' }), [
      '401',
      '401',
      '401',
      'API_RATE_LIMIT_UNAUTHENTICATED',
    ]);
    // Without a trusted proxy in front, X-Forwarded-For is the client's own text: never believed.
    const direct = client({ remoteAddress: '198.51.100.71' });
    assert.deepEqual(await signedOutGets(direct, 4, { 'x-forwarded-for': '203.0.113.10' }), [
      '401',
      '401',
      '401',
      'API_RATE_LIMIT_UNAUTHENTICATED',
    ]);
  });
});
