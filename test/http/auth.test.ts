// Sign-in, sessions and roles (docs/rules.md#authentication-and-csrf), on embedded and PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { createTestApp, DEMO_PASSWORD, type TestApp, type TestAppOptions } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const SESSION_TTL_MS = 12 * 3_600_000;
const ALICE = {
  id: 1,
  email: 'alice@example.com',
  name: 'Alice Martin',
  role: 'employee',
  mustChangePassword: false,
};
const skipPostgres = await skipUnless('postgres');

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  const appFor = async (t: TestContext, options: TestAppOptions = {}): Promise<TestApp> => {
    const testApp = await createTestApp({ ...options, database: kind });
    t.after(testApp.close);
    return testApp;
  };

  describe(`POST /api/auth/login (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('answers 200 with the user, no password hash, and an HttpOnly SameSite=Lax session cookie', async (t) => {
      const { client } = await appFor(t);
      const response = await client().login('alice@example.com');
      assert.equal(response.statusCode, 200);
      const body = response.json<{ user: unknown; csrfToken: string }>();
      assert.deepEqual(Object.keys(body).sort(), ['csrfToken', 'user']);
      assert.deepEqual(body.user, ALICE);
      assert.equal(typeof body.csrfToken, 'string');
      assert.doesNotMatch(response.body, /hash|scrypt|"password|\$argon2/i);
      const cookie = response.cookies.find((c) => c.name === 'tp_session');
      assert.ok(cookie, 'sets the session cookie');
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Lax');
      assert.equal(cookie.path, '/');
      assert.notEqual(cookie.secure, true, 'not Secure over plain HTTP');
    });

    it('marks the session cookie Secure when served over HTTPS through a trusted proxy', async (t) => {
      const { client } = await appFor(t, { env: { TRUST_PROXY: '198.51.100.0/24' } });
      const alice = client();
      await alice.fetchCsrf();
      const response = await alice.request({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: 'alice@example.com', password: DEMO_PASSWORD },
        headers: { 'x-forwarded-proto': 'https' },
      });
      assert.equal(response.statusCode, 200);
      assert.equal(response.cookies.find((c) => c.name === 'tp_session')?.secure, true);
    });

    it('finds the account whatever the case of the email and the spaces around it', async (t) => {
      const { client } = await appFor(t);
      const response = await client().login('  Alice@Example.COM ');
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json().user, ALICE);
    });

    it('answers 401 INVALID_CREDENTIALS with the same status and body for an unknown email and a wrong password', async (t) => {
      const { client } = await appFor(t);
      const unknown = await client().login('nobody@example.com');
      const wrong = await client().login('alice@example.com', 'not-the-password');
      assertError(unknown, 401, 'INVALID_CREDENTIALS');
      assertError(wrong, 401, 'INVALID_CREDENTIALS');
      assert.equal(unknown.body, wrong.body);
      for (const response of [unknown, wrong]) {
        assert.equal(
          response.cookies.find((c) => c.name === 'tp_session'),
          undefined,
          'no session cookie',
        );
      }
    });

    it('answers 400 VALIDATION_ERROR to missing fields, extra fields and wrong types', async (t) => {
      const { client } = await appFor(t);
      const alice = client();
      await alice.fetchCsrf();
      const bodies: unknown[] = [
        {},
        { email: 'alice@example.com' },
        { password: DEMO_PASSWORD },
        { email: 'alice@example.com', password: DEMO_PASSWORD, remember: true },
        { email: 1, password: DEMO_PASSWORD },
        { email: 'alice@example.com', password: ['demo-password'] },
        { email: '', password: DEMO_PASSWORD },
        { email: 'alice@example.com', password: null },
        [],
      ];
      for (const payload of bodies) {
        const response = await alice.request({
          method: 'POST',
          url: '/api/auth/login',
          payload: JSON.stringify(payload),
          headers: { 'content-type': 'application/json' },
        });
        assertError(response, 400, 'VALIDATION_ERROR');
      }
      assert.equal(alice.cookie('tp_session'), undefined);
    });
  });

  describe(`session rotation at login (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('replaces a planted session cookie with a new one', async (t) => {
      const { client } = await appFor(t);
      const victim = client();
      const planted = `${'A'.repeat(43)}.${'B'.repeat(32)}`;
      victim.setCookie('tp_session', planted);
      assert.equal((await victim.login('alice@example.com')).statusCode, 200);
      assert.ok(victim.cookie('tp_session'));
      assert.notEqual(victim.cookie('tp_session'), planted);
      assert.equal((await victim.get('/api/auth/me')).statusCode, 200);
    });

    it("gives a new session id over someone else's planted session, and ends that session", async (t) => {
      const { client } = await appFor(t);
      const attacker = client();
      await attacker.login('bob@example.com');
      const planted = attacker.cookie('tp_session')!;
      const victim = client();
      victim.setCookie('tp_session', planted);
      assert.equal((await victim.login('alice@example.com')).statusCode, 200);
      assert.notEqual(victim.cookie('tp_session'), planted);
      assert.deepEqual((await victim.get('/api/auth/me')).json().user, ALICE);
      assertError(await attacker.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    });

    it('destroys the previous session when the same client signs in again', async (t) => {
      const { client } = await appFor(t);
      const alice = client();
      await alice.login('alice@example.com');
      const first = alice.cookie('tp_session')!;
      await alice.login('alice@example.com');
      const second = alice.cookie('tp_session')!;
      assert.notEqual(second, first);
      const replay = client();
      replay.setCookie('tp_session', first);
      assertError(await replay.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.equal((await alice.get('/api/auth/me')).statusCode, 200);
    });
  });

  describe(`POST /api/auth/logout (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    for (const cache of ['0', '2s']) {
      it(`answers 204 and the old cookie is unauthenticated even when replayed (SESSION_CACHE_TTL=${cache})`, async (t) => {
        const { client } = await appFor(t, { env: { SESSION_CACHE_TTL: cache } });
        const alice = client();
        await alice.login('alice@example.com');
        const cookie = alice.cookie('tp_session')!;
        assert.equal((await alice.get('/api/auth/me')).statusCode, 200);
        const logout = await alice.request({ method: 'POST', url: '/api/auth/logout' });
        assert.equal(logout.statusCode, 204);
        assert.equal(logout.body, '');
        assert.equal(alice.cookie('tp_session'), undefined, 'the cookie is cleared');
        assertError(await alice.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
        const replay = client();
        replay.setCookie('tp_session', cookie);
        assertError(await replay.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      });
    }
  });

  describe(`GET /api/auth/me (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('answers 200 with the signed-in user', async (t) => {
      const { client } = await appFor(t);
      const alice = client();
      await alice.login('alice@example.com');
      const response = await alice.get('/api/auth/me');
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), { user: ALICE });
    });

    it('answers 401 UNAUTHENTICATED without a session', async (t) => {
      const { client } = await appFor(t);
      assertError(await client().get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    });

    it('answers 401 UNAUTHENTICATED to forged, tampered and garbage session cookies', async (t) => {
      const testApp = await appFor(t);
      const other = await appFor(t, { env: { SESSION_SECRET: 'another-secret-another-secret-0123456789' } });
      const elsewhere = other.client();
      await elsewhere.login('alice@example.com'); // a real session row, signed with another secret
      const alice = testApp.client();
      await alice.login('alice@example.com');
      const valid = alice.cookie('tp_session')!;
      const flipped = `${valid[0] === 'A' ? 'B' : 'A'}${valid.slice(1)}`;
      const forged = [
        'garbage',
        '',
        `${'A'.repeat(43)}.${'B'.repeat(32)}`,
        flipped,
        `${valid.split('.')[0]}.`,
        `${valid}x`,
        elsewhere.cookie('tp_session')!,
        'x'.repeat(5000),
      ];
      for (const cookie of forged) {
        const response = await testApp.client().get('/api/auth/me', { cookie: `tp_session=${cookie}` });
        assertError(response, 401, 'UNAUTHENTICATED');
      }
    });

    it('answers 401 UNAUTHENTICATED once the session is older than SESSION_TTL', async (t) => {
      for (const cache of ['0', '2s']) {
        const { client, clock } = await appFor(t, { env: { SESSION_CACHE_TTL: cache } });
        const alice = client();
        await alice.login('alice@example.com');
        clock.advance(SESSION_TTL_MS - 1000);
        assert.equal((await alice.get('/api/auth/me')).statusCode, 200);
        clock.advance(1001);
        assertError(await alice.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      }
    });
  });

  describe(`POST /api/admin/login-locks/reset (${kind})`, {
    skip: kind === 'postgres' && skipPostgres,
  }, () => {
    const reset = (email: unknown = 'bob@example.com') =>
      ({ method: 'POST', url: '/api/admin/login-locks/reset', payload: { email } }) as const;

    it('answers 403 FORBIDDEN to an employee', async (t) => {
      const { client } = await appFor(t);
      const alice = client();
      await alice.login('alice@example.com');
      assertError(await alice.request(reset()), 403, 'FORBIDDEN');
    });

    it('answers 401 UNAUTHENTICATED without a session', async (t) => {
      const { client } = await appFor(t);
      const anonymous = client();
      await anonymous.fetchCsrf();
      assertError(await anonymous.request(reset()), 401, 'UNAUTHENTICATED');
    });

    it("answers 204 to an admin and clears the account's failure counter", async (t) => {
      const { app, client } = await appFor(t);
      for (let i = 0; i < 3; i++) await client().login('bob@example.com', 'wrong');
      const remaining = async () =>
        (await app.services.rateLimit.peek('login-account', 'bob@example.com')).decision.remaining;
      const before = await remaining();
      const admin = client();
      await admin.login('admin@example.com');
      const response = await admin.request(reset(' BOB@example.com'));
      assert.equal(response.statusCode, 204);
      assert.ok((await remaining()) > before);
    });

    it('answers 400 VALIDATION_ERROR to an admin with a bad body', async (t) => {
      const { client } = await appFor(t);
      const admin = client();
      await admin.login('admin@example.com');
      for (const payload of [{}, { email: 5 }, { email: '' }, { email: 'a@b.c', extra: 1 }]) {
        assertError(
          await admin.request({ method: 'POST', url: '/api/admin/login-locks/reset', payload }),
          400,
          'VALIDATION_ERROR',
        );
      }
    });
  });
}
