// Cleaning up an account an attacker held (docs/rules.md#accounts): sessions, devices, passkeys.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it, type TestContext } from 'node:test';
import { CliAccounts } from '../../src/accounts/cli-accounts.ts';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { ApiClient, ApiError, MemoryCookieJar } from '../../src/client/index.ts';
import { createTestApp, type TestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind, testHash } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { ownerWithPasskey, passkeySignIn } from '../helpers/passkeys.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const skipPostgres = await skipUnless('postgres');
const OLD_PASSWORD = 'the password an attacker learnt';
const NEW_PASSWORD = 'a new password from the admin';
const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const ADMIN = 'admin@example.com';
const WRONG = 'not-the-password';

let accountsMade = 0;

const accountsOn = (test: TestApp) =>
  new CliAccounts(test.database.db, {
    clock: test.clock,
    instance: 'test',
    hashPassword: testHash,
    rules: test.app.services.passwordRules,
  });

/** A fresh employee account (the file's database is shared by its tests): its email. */
async function heldAccount(test: TestApp): Promise<string> {
  const email = `held-${++accountsMade}@example.com`;
  await accountsOn(test).add({ email, name: 'Held', role: 'employee', password: OLD_PASSWORD });
  return email;
}

/** A browser signed in to `email`: a session cookie and a device cookie. */
async function signedIn(test: TestApp, email: string, password: string): Promise<TestClient> {
  const browser = test.client();
  assert.equal((await browser.login(email, password)).statusCode, 200);
  assert.ok(browser.cookie(DEVICE_COOKIE));
  return browser;
}

/** Spends the account's login-failure budget from elsewhere: only its known devices may sign in now. */
async function lockOut(test: TestApp, email: string, failures: number): Promise<void> {
  const stranger = test.client();
  for (let i = 0; i < failures; i++)
    assertError(await stranger.login(email, WRONG), 401, 'INVALID_CREDENTIALS');
  assertError(await test.client().login(email, NEW_PASSWORD), 429, 'LOGIN_RATE_LIMIT');
}

/** The stored events about `email` but its sign-ins and failed ones, oldest first, as [type, control, actor]. */
async function eventsAbout(test: TestApp, email: string): Promise<[string, string, number | null][]> {
  await test.app.services.securityEvents.flush(); // events the requests reported are stored in batches
  const rows = await test.database.db.query<{ type: string; control: string; actor_id: number | null }>(
    `SELECT type, control, actor_id FROM security_events
      WHERE email = $1 AND type NOT IN ('signed-in', 'signed-in-new-device', 'sign-in-failed') ORDER BY id`,
    [email],
  );
  return rows.map((row) => [row.type, row.control, row.actor_id]);
}

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`users set-password on a held account (${kind})`, {
    skip: kind === 'postgres' && skipPostgres,
  }, () => {
    it('ends every session of the account and forgets its known devices, each a security event', async (t) => {
      const test = await createTestApp({ database: kind, env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' } });
      t.after(test.close);
      const email = await heldAccount(test);
      const owner = await signedIn(test, email, OLD_PASSWORD);
      const attacker = await signedIn(test, email, OLD_PASSWORD);
      const bob = await signedIn(test, BOB, 'demo-password');

      const { sessionsEnded } = await accountsOn(test).setPassword(email, NEW_PASSWORD);
      assert.equal(sessionsEnded, 2);
      assertError(await attacker.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assertError(await owner.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.equal((await bob.get('/api/auth/me')).statusCode, 200, 'another account keeps its sessions');

      // Locked for unknown browsers, the attacker's browser is one of them now, new password or not.
      test.clock.advance(1);
      await lockOut(test, email, 2);
      await attacker.fetchCsrf(); // its token was bound to the session that ended
      assertError(await attacker.login(email, NEW_PASSWORD), 429, 'LOGIN_RATE_LIMIT');
      assert.deepEqual(await eventsAbout(test, email), [
        ['account-created', 'users-cli', null],
        ['password-set', 'users-cli', null],
        ['sessions-ended', 'users-cli', null],
        ['devices-forgotten', 'users-cli', null],
        ['lock-started', 'login-account', null],
      ]);
    });

    it('keeps them ended through disable and enable, and a browser signing in afterwards is known again', async (t) => {
      const test = await createTestApp({ database: kind, env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' } });
      t.after(test.close);
      const accounts = accountsOn(test);
      const email = await heldAccount(test);
      const attacker = await signedIn(test, email, OLD_PASSWORD);
      await accounts.setPassword(email, NEW_PASSWORD);
      assert.equal(await accounts.disable(email), true);
      assert.equal(await accounts.enable(email), true);
      assertError(await attacker.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.deepEqual(
        await test.database.db.query(
          'SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1',
          [email],
        ),
        [],
      );

      test.clock.advance(1);
      const owner = await signedIn(test, email, NEW_PASSWORD);
      await lockOut(test, email, 2);
      await attacker.fetchCsrf();
      assertError(await attacker.login(email, NEW_PASSWORD), 429, 'LOGIN_RATE_LIMIT');
      assert.equal(
        (await owner.login(email, NEW_PASSWORD)).statusCode,
        200,
        'the owner’s new browser is known',
      );
    });

    it('disable then enable alone brings back neither the sessions nor the devices', async (t) => {
      const test = await createTestApp({ database: kind, env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' } });
      t.after(test.close);
      const accounts = accountsOn(test);
      const email = await heldAccount(test);
      const browser = await signedIn(test, email, OLD_PASSWORD);
      await accounts.disable(email);
      await accounts.enable(email);
      assertError(await browser.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      test.clock.advance(1);
      const stranger = test.client();
      for (let i = 0; i < 2; i++) assertError(await stranger.login(email, WRONG), 401, 'INVALID_CREDENTIALS');
      await browser.fetchCsrf();
      assertError(await browser.login(email, OLD_PASSWORD), 429, 'LOGIN_RATE_LIMIT');
    });
  });
}

/** An app whose admin and Alice are signed in, Alice with a passkey; the admin's and Alice's ids. */
async function passkeyScene(t: TestContext) {
  const test = await createTestApp();
  t.after(test.close);
  await test.database.db.query('DELETE FROM security_events');
  const admin = test.client();
  assert.equal((await admin.login(ADMIN)).statusCode, 200);
  const alice = await ownerWithPasskey(test.client, ALICE);
  const ids = Object.fromEntries(
    (await test.database.db.query<{ id: number; email: string }>('SELECT id, email FROM users')).map(
      (row) => [row.email, row.id],
    ),
  ) as Record<string, number>;
  return { test, admin, alice, adminId: ids[ADMIN]!, aliceId: ids[ALICE]!, bobId: ids[BOB]! };
}

describe('GET /api/admin/users/:id/passkeys', () => {
  it('lists an account’s passkeys (name and times, never a key) to an admin', async (t) => {
    const { admin, alice, aliceId, bobId } = await passkeyScene(t);
    const listed = await admin.get(`/api/admin/users/${aliceId}/passkeys`);
    assert.equal(listed.statusCode, 200, listed.body);
    const { passkeys } = listed.json<{ passkeys: Record<string, unknown>[] }>();
    assert.equal(passkeys.length, 1);
    assert.deepEqual(Object.keys(passkeys[0]!).sort(), ['createdAt', 'id', 'lastUsedAt', 'name']);
    assert.equal(passkeys[0]!.id, alice.passkeyId);
    assert.deepEqual((await admin.get(`/api/admin/users/${bobId}/passkeys`)).json(), { passkeys: [] });
  });

  it('answers 404 NOT_FOUND for no such account, 403 to an employee and 401 to nobody', async (t) => {
    const { test, admin, alice, aliceId } = await passkeyScene(t);
    assertError(await admin.get('/api/admin/users/999999/passkeys'), 404, 'NOT_FOUND');
    assertError(await admin.get('/api/admin/users/0/passkeys'), 400, 'VALIDATION_ERROR');
    assertError(await alice.browser.get(`/api/admin/users/${aliceId}/passkeys`), 403, 'FORBIDDEN');
    assertError(await test.client().get(`/api/admin/users/${aliceId}/passkeys`), 401, 'UNAUTHENTICATED');
  });
});

describe('DELETE /api/admin/users/:id/passkeys/:passkeyId', () => {
  it('removes the passkey, which then signs no one in, with an event naming the admin', async (t) => {
    const { test, admin, alice, aliceId, adminId } = await passkeyScene(t);
    assert.equal((await passkeySignIn(test.client(), alice.authenticator)).statusCode, 200);
    const removed = await admin.request({
      method: 'DELETE',
      url: `/api/admin/users/${aliceId}/passkeys/${alice.passkeyId}`,
    });
    assert.equal(removed.statusCode, 204, removed.body);
    assertError(await passkeySignIn(test.client(), alice.authenticator), 401, 'INVALID_CREDENTIALS');
    assert.deepEqual((await admin.get(`/api/admin/users/${aliceId}/passkeys`)).json(), { passkeys: [] });
    assert.deepEqual(await eventsAbout(test, ALICE), [
      ['passkey-added', 'passkey', null],
      ['passkey-removed', 'passkey', adminId],
    ]);
    assertError(
      await admin.request({
        method: 'DELETE',
        url: `/api/admin/users/${aliceId}/passkeys/${alice.passkeyId}`,
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('answers 404 for a passkey of another account or no account, and removes nothing', async (t) => {
    const { test, admin, alice, bobId } = await passkeyScene(t);
    const remove = (url: string) => admin.request({ method: 'DELETE', url });
    assertError(await remove(`/api/admin/users/${bobId}/passkeys/${alice.passkeyId}`), 404, 'NOT_FOUND');
    assertError(await remove(`/api/admin/users/999999/passkeys/${alice.passkeyId}`), 404, 'NOT_FOUND');
    assertError(await remove(`/api/admin/users/${bobId}/passkeys/999999`), 404, 'NOT_FOUND');
    assert.equal((await passkeySignIn(test.client(), alice.authenticator)).statusCode, 200);
    assert.deepEqual(await eventsAbout(test, ALICE), [['passkey-added', 'passkey', null]]);
  });

  it('needs the CSRF token and an admin', async (t) => {
    const { test, admin, alice, aliceId } = await passkeyScene(t);
    const url = `/api/admin/users/${aliceId}/passkeys/${alice.passkeyId}`;
    assertError(await admin.request({ method: 'DELETE', url, csrf: false }), 403, 'CSRF_INVALID');
    assertError(await alice.browser.request({ method: 'DELETE', url }), 403, 'FORBIDDEN');
    assert.equal((await passkeySignIn(test.client(), alice.authenticator)).statusCode, 200, 'still there');
  });

  it('is called by the typed client', async (t) => {
    const { test, alice, aliceId } = await passkeyScene(t);
    await test.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = test.app.server.address() as AddressInfo;
    const client = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, cookieJar: new MemoryCookieJar() });
    await client.login(ADMIN, 'demo-password');
    const passkeys = await client.userPasskeys(aliceId);
    assert.deepEqual(
      passkeys.map((passkey) => passkey.id),
      [alice.passkeyId],
    );
    await client.removeUserPasskey(aliceId, alice.passkeyId);
    assert.deepEqual(await client.userPasskeys(aliceId), []);
    const missing = await client.removeUserPasskey(aliceId, alice.passkeyId).catch((error: unknown) => error);
    assert.ok(missing instanceof ApiError && missing.code === 'NOT_FOUND', String(missing));
  });
});
