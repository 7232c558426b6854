// The service's own origin (docs/rules.md#authentication-and-csrf): ports, proxies, PUBLIC_ORIGIN.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { createTestApp, DEMO_PASSWORD, type Response, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';

after(closeTestDatabases);

/** A proxy inside TRUST_PROXY's network, and a peer outside it. */
const PROXY = '10.0.0.7';
const STRANGER = '198.51.100.9';

async function clientOf(
  t: TestContext,
  env: Record<string, string> = {},
  remoteAddress = STRANGER,
): Promise<TestClient> {
  const testApp = await createTestApp({ env });
  t.after(testApp.close);
  const client = testApp.client({ remoteAddress });
  await client.fetchCsrf();
  return client;
}

/** A sign-in with a valid token and these headers (the Origin a browser would send among them). */
function login(client: TestClient, headers: Record<string, string>): Promise<Response> {
  return client.request({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email: 'alice@example.com', password: DEMO_PASSWORD },
    headers,
  });
}

function secureCookies(response: Response): Record<string, boolean> {
  return Object.fromEntries(response.cookies.map((cookie) => [cookie.name, cookie.secure === true]));
}

describe('the Origin check against the Host header', () => {
  it('accepts an Origin with the port of the Host, and refuses the same host without it', async (t) => {
    const client = await clientOf(t);
    const host = { host: 'localhost:8080' };
    for (const origin of ['http://localhost', 'http://localhost:80', 'http://localhost:8081']) {
      assertError(await login(client, { ...host, origin }), 403, 'CSRF_INVALID');
    }
    const response = await login(client, { ...host, origin: 'http://localhost:8080' });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('accepts an Origin without a port when the Host has none, whatever the case', async (t) => {
    const client = await clientOf(t);
    assertError(
      await login(client, { host: 'portal.example', origin: 'http://portal.example:8080' }),
      403,
      'CSRF_INVALID',
    );
    const response = await login(client, { host: 'Portal.Example', origin: 'http://portal.example' });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('refuses any Origin when the Host names no host', async (t) => {
    const client = await clientOf(t);
    for (const host of ['', 'portal.example/path', 'user@portal.example', 'portal.example:99999']) {
      assertError(await login(client, { host, origin: `http://${host}` }), 403, 'CSRF_INVALID');
    }
  });
});

describe('the Origin check behind a proxy', () => {
  const TRUSTED = { TRUST_PROXY: '10.0.0.0/8' };
  // What the shipped nginx sends for a browser at https://portal.example:8443 (TLS ended there).
  const FORWARDED = {
    host: '10.0.0.20:3000',
    'x-forwarded-host': 'portal.example:8443',
    'x-forwarded-proto': 'https',
  };

  it('takes the scheme, host and port from a trusted proxy, and marks the cookies Secure', async (t) => {
    const client = await clientOf(t, TRUSTED, PROXY);
    for (const origin of ['http://10.0.0.20:3000', 'https://portal.example', 'http://portal.example:8443']) {
      assertError(await login(client, { ...FORWARDED, origin }), 403, 'CSRF_INVALID');
    }
    const response = await login(client, { ...FORWARDED, origin: 'https://portal.example:8443' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(secureCookies(response), { tp_session: true, tp_device: true });
  });

  it('believes no X-Forwarded-Host or X-Forwarded-Proto from a peer it does not trust', async (t) => {
    for (const env of [{}, TRUSTED]) {
      const client = await clientOf(t, env, STRANGER);
      const forged = { ...FORWARDED, 'x-forwarded-host': 'evil.example' };
      for (const origin of ['https://evil.example', 'https://portal.example:8443']) {
        assertError(await login(client, { ...forged, origin }), 403, 'CSRF_INVALID');
      }
      const response = await login(client, { ...forged, origin: 'http://10.0.0.20:3000' });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(secureCookies(response), { tp_session: false, tp_device: false });
    }
  });
});

describe('PUBLIC_ORIGIN', () => {
  const PUBLIC = { PUBLIC_ORIGIN: 'https://portal.example.com' };

  it('is the only origin accepted, whatever the Host or the forwarded headers say', async (t) => {
    const client = await clientOf(t, { ...PUBLIC, TRUST_PROXY: '10.0.0.0/8' }, PROXY);
    const headers = { host: 'app-1:3000', 'x-forwarded-host': 'other.example', 'x-forwarded-proto': 'http' };
    for (const origin of ['http://app-1:3000', 'http://other.example', 'http://portal.example.com']) {
      assertError(await login(client, { ...headers, origin }), 403, 'CSRF_INVALID');
    }
    const response = await login(client, { ...headers, origin: 'https://portal.example.com:443' });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('marks the cookies Secure when it is https, even over plain HTTP from an untrusted peer', async (t) => {
    const testApp = await createTestApp({ env: PUBLIC });
    t.after(testApp.close);
    const client = testApp.client();
    const token = await client.get('/api/csrf-token');
    assert.deepEqual(secureCookies(token), { tp_csrf: true });
    client.csrfToken = token.json<{ csrfToken: string }>().csrfToken;
    const response = await login(client, { origin: 'https://portal.example.com' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(secureCookies(response), { tp_session: true, tp_device: true });
  });
});
