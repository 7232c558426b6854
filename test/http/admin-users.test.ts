// People, for admins (docs/rules.md#accounts): add, edit, disable, reset, never lose the last admin.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { TEMPORARY_PASSWORD_TTL_MS } from '../../src/limits.ts';
import {
  changePassword,
  eventsAbout,
  freshAccount,
  NEW_PASSWORD,
  OWN_PASSWORD,
  signedIn,
} from '../helpers/accounts.ts';
import { type TestApp, type TestClient, testAppFor } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { HeldHasher } from '../helpers/held-hasher.ts';
import { assertError } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);
const skipPostgres = await skipUnless('postgres');

interface AdminUserBody {
  id: number;
  email: string;
  name: string;
  role: string;
  mustChangePassword: boolean;
  disabled: boolean;
  createdAt: string;
  lastSignInAt: string | null;
}

/** An admin of the test's own, signed in. */
async function admin(test: TestApp): Promise<{ browser: TestClient; id: number; email: string }> {
  const account = await freshAccount(test, 'admin');
  return { ...account, browser: await signedIn(test, account.email) };
}

const add = (browser: TestClient, payload: Record<string, unknown>) =>
  browser.request({ method: 'POST', url: '/api/admin/users', payload });
const edit = (browser: TestClient, id: number, payload: Record<string, unknown>) =>
  browser.request({ method: 'PATCH', url: `/api/admin/users/${id}`, payload });

describe('POST /api/admin/users and a temporary password', () => {
  it('adds an account whose temporary password signs in once to a change of password, and nothing else', async (t) => {
    const test = await testAppFor(t);
    const { browser } = await admin(test);
    const email = `new-${Date.now()}@example.com`;
    const created = await add(browser, { email, name: 'New Colleague', role: 'employee' });
    assert.equal(created.statusCode, 201, created.body);
    const { user, temporaryPassword } = created.json<{ user: AdminUserBody; temporaryPassword: string }>();
    assert.ok(temporaryPassword.length >= 20);
    assert.deepEqual(
      { ...user, id: 0 },
      {
        id: 0,
        email,
        name: 'New Colleague',
        role: 'employee',
        mustChangePassword: true,
        disabled: false,
        createdAt: new Date(test.clock.now()).toISOString(),
        lastSignInAt: null,
      },
    );
    assertError(
      await add(browser, { email: email.toUpperCase(), name: 'Again', role: 'employee' }),
      409,
      'EMAIL_TAKEN',
    );

    const colleague = test.client();
    const login = await colleague.login(email, temporaryPassword);
    assert.equal(login.statusCode, 200);
    assert.equal(login.json<{ user: { mustChangePassword: boolean } }>().user.mustChangePassword, true);
    // Until the password is changed: me, the change, logout and the CSRF token, nothing else.
    assert.equal(
      (await colleague.get('/api/auth/me')).json<{ user: AdminUserBody }>().user.mustChangePassword,
      true,
    );
    assert.equal((await colleague.get('/api/csrf-token')).statusCode, 200);
    for (const url of [
      '/api/employee/tasks',
      '/api/auth/sessions',
      '/api/auth/devices',
      '/api/rate-limits',
      '/api/auth/passkeys',
    ])
      assertError(await colleague.get(url), 403, 'PASSWORD_CHANGE_REQUIRED');
    assertError(
      await colleague.request({ method: 'POST', url: '/api/auth/sessions/end-others' }),
      403,
      'PASSWORD_CHANGE_REQUIRED',
    );
    // The temporary password itself is not a password of one's own.
    assert.equal(
      assertError(await changePassword(colleague, temporaryPassword, 'short'), 422, 'PASSWORD_REFUSED')
        .reason,
      'too_short',
    );
    assert.equal((await changePassword(colleague, temporaryPassword, NEW_PASSWORD)).statusCode, 200);
    const me = (await colleague.get('/api/auth/me')).json<{ user: AdminUserBody }>().user;
    assert.equal(me.mustChangePassword, false);
    assert.equal((await colleague.get('/api/employee/tasks')).statusCode, 200);
    const listed = (await browser.get('/api/admin/users')).json<{ users: AdminUserBody[] }>().users;
    const row = listed.find((u) => u.email === email)!;
    assert.equal(row.mustChangePassword, false);
    assert.equal(row.lastSignInAt, new Date(test.clock.now()).toISOString());
    assert.deepEqual(
      (await eventsAbout(test, email)).filter((e) => !e.startsWith('signed-in')),
      ['account-created admin', 'password-changed account'],
    );
  });

  it('lets a temporary password sign in for 7 days only, then as a wrong one would', async (t) => {
    const test = await testAppFor(t);
    const { browser } = await admin(test);
    const email = `late-${Date.now()}@example.com`;
    const { temporaryPassword } = (await add(browser, { email, name: 'Late', role: 'employee' })).json<{
      temporaryPassword: string;
    }>();
    test.clock.advance(TEMPORARY_PASSWORD_TTL_MS - 1000);
    assert.equal((await test.client().login(email, temporaryPassword)).statusCode, 200);
    test.clock.advance(1000);
    assertError(await test.client().login(email, temporaryPassword), 401, 'INVALID_CREDENTIALS');
  });

  it('answers 400 for bad input and 403 to anyone but an admin', async (t) => {
    const test = await testAppFor(t);
    const { browser } = await admin(test);
    for (const payload of [
      {},
      { email: 'x@example.com', name: 'X' },
      { email: 'not an email', name: 'X', role: 'employee' },
      { email: 'x@example.com', name: '   ', role: 'employee' },
      { email: 'x@example.com', name: 'X', role: 'root' },
      { email: 'x\u0000@example.com', name: 'X', role: 'employee' },
      { email: 'x@example.com', name: 'X', role: 'employee', password: 'mine' },
    ])
      assertError(await add(browser, payload), 400, 'VALIDATION_ERROR');
    const employee = await signedIn(test, (await freshAccount(test)).email);
    assertError(await employee.get('/api/admin/users'), 403, 'FORBIDDEN');
    assertError(await add(employee, { email: 'y@example.com', name: 'Y', role: 'admin' }), 403, 'FORBIDDEN');
  });
});

describe('PATCH /api/admin/users/:id', () => {
  it('renames, changes the role, and disabling ends the account’s sessions and devices at once', async (t) => {
    const test = await testAppFor(t, { env: { SESSION_CACHE_TTL: '10m' } });
    const { browser } = await admin(test);
    const person = await freshAccount(test);
    const theirs = await signedIn(test, person.email);
    assert.equal((await theirs.get('/api/auth/me')).statusCode, 200, 'cached now');
    const renamed = await edit(browser, person.id, { name: '  Renamed Person ', role: 'admin' });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json<{ user: AdminUserBody }>().user.name, 'Renamed Person');
    // The cached session serves the new role at once.
    assert.equal((await theirs.get('/api/auth/me')).json<{ user: AdminUserBody }>().user.role, 'admin');
    const disabled = await edit(browser, person.id, { disabled: true, role: 'employee' });
    assert.equal(disabled.json<{ user: AdminUserBody }>().user.disabled, true);
    assertError(await theirs.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    assertError(await test.client().login(person.email), 401, 'INVALID_CREDENTIALS');
    assert.equal(
      (await test.database.db.query('SELECT 1 FROM known_devices WHERE user_id = $1', [person.id])).length,
      0,
    );
    assert.equal(
      (await edit(browser, person.id, { disabled: false })).json<{ user: AdminUserBody }>().user.disabled,
      false,
    );
    assert.deepEqual(
      (await eventsAbout(test, person.email)).filter((e) => !e.startsWith('sign')),
      [
        'account-renamed admin',
        'account-role-changed admin',
        'account-role-changed admin',
        'account-disabled admin',
        'account-enabled admin',
      ],
    );
  });

  it('shows the account’s owner that an admin changed it, not from which address', async (t) => {
    const test = await testAppFor(t);
    const { browser, id: adminId } = await admin(test);
    const person = await freshAccount(test);
    const owner = await signedIn(test, person.email);
    assert.equal((await edit(browser, person.id, { name: 'Renamed Person' })).statusCode, 200);
    const { events } = (await owner.get('/api/auth/security-events')).json<{
      events: { type: string; actorId: number | null; address: string | null }[];
    }>();
    const renamed = events.find((event) => event.type === 'account-renamed');
    assert.deepEqual(renamed && { actorId: renamed.actorId, address: renamed.address }, {
      actorId: adminId,
      address: null,
    });
    assert.ok(
      events.some((event) => event.type === 'signed-in-new-device' && event.address !== null),
      'the owner’s own sign-in keeps its address',
    );
  });

  it('answers 422 LAST_ADMIN to an admin disabling or demoting themself, or the last enabled admin', async (t) => {
    const test = await testAppFor(t);
    // Only this test's admins are enabled admins.
    await test.database.db.query("UPDATE users SET disabled_at = now() WHERE role = 'admin'");
    t.after(() => test.database.db.query('UPDATE users SET disabled_at = NULL WHERE id <= 4'));
    const first = await admin(test);
    for (const change of [{ role: 'employee' }, { disabled: true }])
      assertError(await edit(first.browser, first.id, change), 422, 'LAST_ADMIN');
    const second = await admin(test);
    assert.equal((await edit(first.browser, second.id, { role: 'employee' })).statusCode, 200);
    // `second` is no admin any more; `first` is the last one.
    assertError(await edit(second.browser, first.id, { role: 'employee' }), 403, 'FORBIDDEN');
    assertError(await edit(first.browser, first.id, { disabled: true }), 422, 'LAST_ADMIN');
    // A rename of oneself is fine.
    assert.equal((await edit(first.browser, first.id, { name: 'Still Admin' })).statusCode, 200);
  });

  it('answers 404 for no such account and 400 for bad input, and changes nothing', async (t) => {
    const test = await testAppFor(t);
    const { browser } = await admin(test);
    const person = await freshAccount(test);
    assertError(await edit(browser, 2_000_000_000, { name: 'Nobody' }), 404, 'NOT_FOUND');
    for (const payload of [
      {},
      { name: '' },
      { role: 'owner' },
      { disabled: 'yes' },
      { email: 'x@example.com' },
    ])
      assertError(await edit(browser, person.id, payload), 400, 'VALIDATION_ERROR');
    for (const id of ['0', 'abc', '2147483648', '-5'])
      assertError(
        await browser.request({ method: 'PATCH', url: `/api/admin/users/${id}`, payload: { name: 'X' } }),
        400,
        'VALIDATION_ERROR',
      );
  });
});

describe('POST /api/admin/users/:id/password-reset', () => {
  it('gives a new temporary password and ends the account’s sessions and devices', async (t) => {
    const test = await testAppFor(t);
    const { browser } = await admin(test);
    const person = await freshAccount(test);
    const theirs = await signedIn(test, person.email);
    const response = await browser.request({
      method: 'POST',
      url: `/api/admin/users/${person.id}/password-reset`,
    });
    assert.equal(response.statusCode, 200);
    const { temporaryPassword } = response.json<{ temporaryPassword: string }>();
    assertError(await theirs.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    const login = await test.client().login(person.email, temporaryPassword);
    assert.equal(login.json<{ user: { mustChangePassword: boolean } }>().user.mustChangePassword, true);
    assertError(
      await browser.request({ method: 'POST', url: '/api/admin/users/2000000000/password-reset' }),
      404,
      'NOT_FOUND',
    );
    const events = (await eventsAbout(test, person.email)).filter((e) => !e.startsWith('signed-in'));
    assert.deepEqual(events, ['password-reset admin', 'sessions-ended admin', 'devices-forgotten admin']);
  });

  it('stands against a sign-in with the old password checked while it landed: that sign-in is 401 and starts no session', async (t) => {
    const hasher = new HeldHasher();
    const test = await testAppFor(t, { hasher });
    const { browser } = await admin(test);
    const person = await freshAccount(test);
    hasher.holdChecks();
    const holder = test.client();
    await holder.fetchCsrf();
    const signIn = holder.login(person.email, OWN_PASSWORD);
    await hasher.untilHeld(1); // the old password's check, under way
    const reset = browser.request({ method: 'POST', url: `/api/admin/users/${person.id}/password-reset` });
    await hasher.untilHeld(2); // the temporary password's hash
    hasher.held.splice(1, 1)[0]!.release(0);
    assert.equal((await reset).statusCode, 200);
    hasher.letThrough();
    assertError(await signIn, 401, 'INVALID_CREDENTIALS');
    assertError(await holder.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    const [{ n }] = (await test.database.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sessions WHERE user_id = $1',
      [person.id],
    )) as [{ n: number }];
    assert.equal(n, 0, 'no session of the account outlived the reset');
  });
});

describe('an admin demoted while their change is on its way', () => {
  it('resets no password: the reset re-checks its actor inside its transaction (403 FORBIDDEN)', async (t) => {
    const hasher = new HeldHasher();
    const test = await testAppFor(t, { hasher });
    const actor = await admin(test);
    const other = await admin(test);
    const person = await freshAccount(test);
    hasher.holdChecks();
    const reset = actor.browser.request({
      method: 'POST',
      url: `/api/admin/users/${person.id}/password-reset`,
    });
    await hasher.untilHeld(1); // the temporary password's hash: the request passed its admin check
    hasher.letThrough();
    const demoted = await edit(other.browser, actor.id, { role: 'employee' });
    assert.equal(demoted.statusCode, 200, demoted.body);
    assertError(await reset, 403, 'FORBIDDEN');
    // The old password still signs in: nothing was reset.
    await signedIn(test, person.email);
  });

  it('removes no passkey: the removal re-checks its actor inside its transaction (403 FORBIDDEN)', async (t) => {
    // Sessions cached for 10 minutes: the request's own check reads the actor as the cache has them.
    const test = await testAppFor(t, { env: { SESSION_CACHE_TTL: '10m' } });
    const actor = await admin(test);
    assert.equal((await actor.browser.get('/api/admin/users')).statusCode, 200, 'cached as an admin');
    // Demoted where the cache does not hear of it (as if the announcement were lost).
    await test.database.db.query("UPDATE users SET role = 'employee' WHERE id = $1", [actor.id]);
    const removal = await actor.browser.request({ method: 'DELETE', url: '/api/admin/users/1/passkeys/1' });
    assertError(removal, 403, 'FORBIDDEN');
  });
});

describe('two admins demoting each other at once (postgres)', { skip: skipPostgres }, () => {
  it('leaves one enabled admin: one edit succeeds, the other is refused', async (t) => {
    const test = await testAppFor(t, { database: 'postgres' });
    await test.database.db.query("UPDATE users SET role = 'employee' WHERE role = 'admin'");
    t.after(() =>
      test.database.db.query("UPDATE users SET role = 'admin' WHERE email = 'admin@example.com'"),
    );
    for (let round = 0; round < 5; round++) {
      const a = await admin(test);
      const b = await admin(test);
      const answers = await Promise.all([
        edit(a.browser, b.id, { role: 'employee' }),
        edit(b.browser, a.id, { role: 'employee' }),
      ]);
      assert.deepEqual(
        answers.map((r) => r.statusCode).sort(),
        [200, 403],
        answers.map((r) => r.body).join(' '),
      );
      const admins = await test.database.db.query(
        "SELECT id FROM users WHERE role = 'admin' AND disabled_at IS NULL",
      );
      assert.equal(admins.length, 1);
      await test.database.db.query("UPDATE users SET role = 'employee' WHERE role = 'admin'");
    }
  });
});
