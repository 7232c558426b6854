// CSRF (docs/rules.md#authentication-and-csrf): token and cookie, unsafe routes, Fetch metadata, Origin.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import {
  createTestApp,
  DEMO_PASSWORD,
  type Response,
  type TestApp,
  type TestClient,
} from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError, taskSnapshot } from '../helpers/http.ts';

after(closeTestDatabases);

interface UnsafeRoute {
  readonly method: 'POST' | 'PATCH';
  readonly url: string;
  readonly payload?: Record<string, unknown>;
  readonly success: number;
  /** Puts the client in the state the route needs; returns a probe of the state the route would change. */
  setUp(testApp: TestApp, client: TestClient): Promise<() => Promise<unknown>>;
}

const UNSAFE_ROUTES: readonly UnsafeRoute[] = [
  {
    method: 'POST',
    url: '/api/auth/login',
    payload: { email: 'alice@example.com', password: DEMO_PASSWORD },
    success: 200,
    async setUp(_testApp, client) {
      await client.fetchCsrf();
      return async () => [client.cookie('tp_session') ?? null, (await client.get('/api/auth/me')).statusCode];
    },
  },
  {
    method: 'POST',
    url: '/api/auth/logout',
    success: 204,
    async setUp(_testApp, client) {
      await client.login('alice@example.com');
      return async () => (await client.get('/api/auth/me')).statusCode;
    },
  },
  {
    method: 'PATCH',
    url: '/api/employee/tasks/bulk',
    payload: { taskIds: [1, 2], assigneeId: 1 },
    success: 200,
    async setUp(testApp, client) {
      await client.login('alice@example.com');
      return () => taskSnapshot(testApp);
    },
  },
  {
    method: 'POST',
    url: '/api/admin/login-locks/reset',
    payload: { email: 'bob@example.com' },
    success: 204,
    async setUp(testApp, client) {
      await testApp.client().login('bob@example.com', 'wrong password'); // one failure on bob's counter
      await client.login('admin@example.com');
      return async () =>
        (await testApp.app.services.rateLimit.peek('login-account', 'bob@example.com')).decision.remaining;
    },
  },
];

async function appFor(t: TestContext): Promise<TestApp> {
  const testApp = await createTestApp();
  t.after(testApp.close);
  return testApp;
}

function send(
  client: TestClient,
  route: UnsafeRoute,
  headers: Record<string, string> = {},
  csrf = true,
): Promise<Response> {
  return client.request({ method: route.method, url: route.url, payload: route.payload, headers, csrf });
}

describe('GET /api/csrf-token', () => {
  it('answers 200 with a token and sets the HttpOnly cookie that backs it', async (t) => {
    const testApp = await appFor(t);
    const response = await testApp.client().get('/api/csrf-token');
    assert.equal(response.statusCode, 200);
    const { csrfToken } = response.json<{ csrfToken: string }>();
    assert.equal(typeof csrfToken, 'string');
    assert.ok(csrfToken.length >= 32);
    const cookie = response.cookies.find((c) => c.name === 'tp_csrf');
    assert.ok(cookie, 'sets the CSRF cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
  });

  it('gives each client its own token, and the same token again to the same client', async (t) => {
    const testApp = await appFor(t);
    const first = testApp.client();
    const token = await first.fetchCsrf();
    assert.equal(await first.fetchCsrf(), token);
    assert.notEqual(await testApp.client().fetchCsrf(), token);
  });
});

for (const route of UNSAFE_ROUTES) {
  describe(`${route.method} ${route.url}`, () => {
    it('answers 403 CSRF_INVALID without a token, and changes nothing', async (t) => {
      const testApp = await appFor(t);
      const client = testApp.client();
      const probe = await route.setUp(testApp, client);
      const before = await probe();
      assertError(await send(client, route, {}, false), 403, 'CSRF_INVALID');
      assert.deepEqual(await probe(), before);
    });

    it('answers 403 CSRF_INVALID with an invalid token, and changes nothing', async (t) => {
      const testApp = await appFor(t);
      const client = testApp.client();
      const probe = await route.setUp(testApp, client);
      const before = await probe();
      const valid = client.csrfToken!;
      const tampered = `${valid.slice(0, -1)}${valid.endsWith('A') ? 'B' : 'A'}`;
      for (const token of ['', 'not-a-token', tampered, `${valid}x`]) {
        assertError(await send(client, route, { 'x-csrf-token': token }), 403, 'CSRF_INVALID');
      }
      assert.deepEqual(await probe(), before);
    });

    it('answers 403 CSRF_INVALID with a token obtained by another client', async (t) => {
      const testApp = await appFor(t);
      const client = testApp.client();
      const probe = await route.setUp(testApp, client);
      const before = await probe();
      const preSession = await testApp.client().fetchCsrf();
      const otherUser = testApp.client();
      await otherUser.login('carol@example.com');
      for (const token of [preSession, otherUser.csrfToken!]) {
        assertError(await send(client, route, { 'x-csrf-token': token }), 403, 'CSRF_INVALID');
      }
      assert.deepEqual(await probe(), before);
    });

    it('answers 403 CSRF_INVALID to Sec-Fetch-Site: cross-site even with a valid token', async (t) => {
      const testApp = await appFor(t);
      const client = testApp.client();
      const probe = await route.setUp(testApp, client);
      const before = await probe();
      assertError(await send(client, route, { 'sec-fetch-site': 'cross-site' }), 403, 'CSRF_INVALID');
      assert.deepEqual(await probe(), before);
    });

    it('answers 403 CSRF_INVALID to an Origin of another origin even with a valid token', async (t) => {
      const testApp = await appFor(t);
      const client = testApp.client();
      const probe = await route.setUp(testApp, client);
      const before = await probe();
      const host = { host: 'portal.example:3000' };
      for (const origin of [
        'https://evil.example',
        'http://portal.example:3001',
        'https://portal.example:3000',
        'null',
      ]) {
        assertError(await send(client, route, { ...host, origin }), 403, 'CSRF_INVALID');
      }
      assert.deepEqual(await probe(), before);
    });

    it(`answers ${route.success} to a valid token from the same origin, and makes its change`, async (t) => {
      const testApp = await appFor(t);
      const client = testApp.client();
      const probe = await route.setUp(testApp, client);
      const before = await probe();
      const response = await send(client, route, {
        host: 'portal.example:3000',
        origin: 'http://portal.example:3000',
        'sec-fetch-site': 'same-origin',
      });
      assert.equal(response.statusCode, route.success, response.body);
      assert.equal(response.headers['access-control-allow-origin'], undefined, 'no CORS headers by default');
      assert.notDeepEqual(await probe(), before);
    });

    it('treats an explicit default port as the same origin', async (t) => {
      const testApp = await appFor(t);
      const client = testApp.client();
      await route.setUp(testApp, client);
      const response = await send(client, route, {
        host: 'portal.example:80',
        origin: 'http://portal.example',
      });
      assert.equal(response.statusCode, route.success, response.body);
    });
  });
}

describe('CSRF token rotation at login', () => {
  it('refuses the pre-session token once signed in, and hands out the login response token from then on', async (t) => {
    const testApp = await appFor(t);
    const client = testApp.client();
    const preSession = await client.fetchCsrf();
    const login = await client.login('alice@example.com');
    assert.equal(login.statusCode, 200);
    const { csrfToken } = login.json<{ csrfToken: string }>();
    assert.notEqual(csrfToken, preSession);
    assert.equal(await client.fetchCsrf(), csrfToken);

    const bulk = {
      method: 'PATCH',
      url: '/api/employee/tasks/bulk',
      payload: { taskIds: [3], assigneeId: 1 },
    } as const;
    assertError(
      await client.request({ ...bulk, headers: { 'x-csrf-token': preSession } }),
      403,
      'CSRF_INVALID',
    );
    const accepted = await client.request({ ...bulk, headers: { 'x-csrf-token': csrfToken } });
    assert.equal(accepted.statusCode, 200);
  });

  it('refuses the old session token after signing in again', async (t) => {
    const testApp = await appFor(t);
    const client = testApp.client();
    await client.login('alice@example.com');
    const firstSessionToken = client.csrfToken!;
    assert.equal((await client.login('alice@example.com')).statusCode, 200);
    assert.notEqual(client.csrfToken, firstSessionToken);
    const logout = { method: 'POST', url: '/api/auth/logout' } as const;
    assertError(
      await client.request({ ...logout, headers: { 'x-csrf-token': firstSessionToken } }),
      403,
      'CSRF_INVALID',
    );
    assert.equal((await client.request(logout)).statusCode, 204);
  });
});
