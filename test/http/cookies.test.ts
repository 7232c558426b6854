// The cookies the API reads and writes: hostile Cookie headers, one Set-Cookie line each, logout.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { CSRF_COOKIE } from '../../src/http/plugins/csrf.ts';
import { SESSION_COOKIE } from '../../src/http/session-cookie.ts';
import { createTestApp, type Response } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';

after(closeTestDatabases);

async function testApp(t: TestContext) {
  const app = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '1000/1m' } });
  t.after(app.close);
  return app;
}

/** The Set-Cookie lines of a response, in order. */
function setCookies(response: Response): string[] {
  const header = response.headers['set-cookie'];
  if (header === undefined) return [];
  return Array.isArray(header) ? header : [String(header)];
}

describe('the Cookie header', () => {
  it('answers a malformed or hostile Cookie header as unauthenticated, never with a 5xx', async (t) => {
    const { app } = await testApp(t);
    for (const cookie of [
      'garbage',
      ';;;',
      '=;=',
      'tp_session=%E0%A4%A; b; c=%zz',
      'tp_session="quoted"; tp_session==c',
      '__proto__=1; constructor=2; toString=3',
      `tp_session=${'x'.repeat(4000)}`,
      'tp_session=a.b.c',
    ]) {
      const response = await app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
      assertError(response as Response, 401, 'UNAUTHENTICATED');
    }
  });

  it('reads the first of a repeated session cookie', async (t) => {
    const { app, client } = await testApp(t);
    const alice = client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const session = `${SESSION_COOKIE}=${alice.cookie(SESSION_COOKIE)}`;
    const me = (cookie: string) => app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
    assert.equal((await me(`${session}; ${SESSION_COOKIE}=forged`)).statusCode, 200);
    assert.equal((await me(`${SESSION_COOKIE}=forged; ${session}`)).statusCode, 401);
  });
});

describe('Set-Cookie', () => {
  it('a login sets the session and the device cookie once each, with their own attributes', async (t) => {
    const { client } = await testApp(t);
    const alice = client();
    await alice.fetchCsrf();
    const response = await alice.login('alice@example.com');
    assert.equal(response.statusCode, 200);
    const lines = setCookies(response);
    const names = lines.map((line) => line.slice(0, line.indexOf('=')));
    assert.deepEqual(names.sort(), [DEVICE_COOKIE, SESSION_COOKIE].sort());
    const session = lines.find((line) => line.startsWith(`${SESSION_COOKIE}=`))!;
    assert.match(session, /; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/);
    const device = lines.find((line) => line.startsWith(`${DEVICE_COOKIE}=`))!;
    assert.match(device, /; Path=\/api\/auth; HttpOnly; SameSite=Strict$/);
  });

  it('GET /api/csrf-token sets the pre-session cookie when it is missing, and only then', async (t) => {
    const { client } = await testApp(t);
    const browser = client();
    const first = await browser.get('/api/csrf-token');
    const [line, ...more] = setCookies(first);
    assert.deepEqual(more, []);
    assert.match(line!, new RegExp(`^${CSRF_COOKIE}=[\\w-]{43}; Path=/; HttpOnly; SameSite=Lax$`));
    assert.deepEqual(setCookies(await browser.get('/api/csrf-token')), [], 'the cookie is kept');
  });

  it('logout clears the session cookie: an empty value, Max-Age=0 and an Expires in 1970', async (t) => {
    const { client } = await testApp(t);
    const alice = client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const response = await alice.request({ method: 'POST', url: '/api/auth/logout' });
    assert.equal(response.statusCode, 204);
    assert.deepEqual(setCookies(response), [
      `${SESSION_COOKIE}=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax`,
    ]);
    assert.equal(alice.cookie(SESSION_COOKIE), undefined);
    assert.equal((await alice.get('/api/auth/me')).statusCode, 401);
  });
});
