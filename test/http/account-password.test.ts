// POST /api/auth/password (docs/rules.md#accounts): the check, the rules, the rotation, the clean-up.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { SESSION_COOKIE } from '../../src/http/session-cookie.ts';
import {
  changePassword,
  eventsAbout,
  freshAccount,
  NEW_PASSWORD,
  OWN_PASSWORD,
  signedIn,
} from '../helpers/accounts.ts';
import { testAppFor } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { HeldHasher } from '../helpers/held-hasher.ts';
import { assertError } from '../helpers/http.ts';
import { assertRefused } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

/** Easy to guess for their length (docs/rules.md#accounts): each was taken, and then signed in. */
const WEAK = [
  '111111111111',
  'aaaaaaaaaaaa',
  ' '.repeat(12),
  '!password1234',
  ' password1234',
  'password1234\u200b',
  'qwertyuiopas',
  'abcabcabcabc',
  '123456789012',
];

describe('POST /api/auth/password', () => {
  it('rotates the session, ends every other one, forgets every other known device, with one event', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const other = await signedIn(test, email);
    const here = await signedIn(test, email);
    const oldCookie = here.cookie(SESSION_COOKIE)!;
    const oldToken = here.csrfToken;
    const response = await changePassword(here, OWN_PASSWORD, NEW_PASSWORD);
    assert.equal(response.statusCode, 200, response.body);
    const { csrfToken } = response.json<{ csrfToken: string }>();
    assert.notEqual(csrfToken, oldToken, 'a new CSRF token');
    assert.notEqual(here.cookie(SESSION_COOKIE), oldCookie, 'a new session cookie');
    // This browser goes on with its new session; the old cookie and the other browser are signed out.
    assert.equal((await here.get('/api/auth/me')).statusCode, 200);
    assertError(
      await here.get('/api/auth/me', { cookie: `${SESSION_COOKIE}=${oldCookie}` }),
      401,
      'UNAUTHENTICATED',
    );
    assertError(await other.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    // Only this browser is a known device now.
    const devices = (await here.get('/api/auth/devices')).json<{ devices: unknown[] }>().devices;
    assert.equal(devices.length, 1);
    // The new password signs in, the old one does not.
    await signedIn(test, email, NEW_PASSWORD);
    assertError(await test.client().login(email, OWN_PASSWORD), 401, 'INVALID_CREDENTIALS');
    assert.ok((await eventsAbout(test, email)).includes('password-changed account'));
  });

  it('answers 422 CURRENT_PASSWORD_INVALID for a wrong current password, a failed login of the account and the address', async (t) => {
    const test = await testAppFor(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' } });
    const { email } = await freshAccount(test);
    const browser = await signedIn(test, email);
    for (let i = 0; i < 2; i++)
      assertError(
        await changePassword(browser, 'not my password at all', NEW_PASSWORD),
        422,
        'CURRENT_PASSWORD_INVALID',
      );
    // Over the account's budget: refused before any check, the right password too, and at the login.
    assertRefused(
      await changePassword(browser, OWN_PASSWORD, NEW_PASSWORD),
      'LOGIN_RATE_LIMIT',
      'login-account',
    );
    assertRefused(await test.client().login(email, OWN_PASSWORD), 'LOGIN_RATE_LIMIT', 'login-account');
    const events = await eventsAbout(test, email);
    assert.equal(events.filter((e) => e === 'sign-in-failed password-change').length, 2);
    assert.ok(events.includes('lock-started login-account'));
    // Nothing changed: the session stands, the password is the old one.
    assert.equal((await browser.get('/api/auth/me')).statusCode, 200);
  });

  it('counts a wrong current password against the address too', async (t) => {
    const test = await testAppFor(t, { env: { RATE_LIMIT_LOGIN_IP: '2/15m' } });
    const { email } = await freshAccount(test);
    const browser = await signedIn(test, email);
    for (let i = 0; i < 2; i++)
      assertError(
        await changePassword(browser, 'not my password at all', NEW_PASSWORD),
        422,
        'CURRENT_PASSWORD_INVALID',
      );
    assertRefused(await changePassword(browser, OWN_PASSWORD, NEW_PASSWORD), 'LOGIN_RATE_LIMIT', 'login-ip');
  });

  it('refuses a new password by the rules with its reason and a message to act on, and changes nothing', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const browser = await signedIn(test, email);
    const local = email.slice(0, email.indexOf('@'));
    for (const [password, reason] of [
      ['short one', 'too_short'],
      ['', 'too_short'],
      ['x'.repeat(129), 'too_long'],
      ['x'.repeat(20_000), 'too_long'],
      // The NFKC form is what is hashed, and what is counted: four syllables, six letters.
      ['\u1100\u1161\u11a8'.repeat(4), 'too_short'],
      ['a\u0301'.repeat(6), 'too_short'],
      ['Password1234', 'common'],
      ['qwerty123456!', 'common'],
      ...WEAK.map((password) => [password, 'weak'] as const),
      [`my ${local.toUpperCase()} secret`, 'contains_email'],
      [OWN_PASSWORD, 'unchanged'],
    ] as const) {
      const body = assertError(
        await changePassword(browser, OWN_PASSWORD, password),
        422,
        'PASSWORD_REFUSED',
      );
      assert.equal(body.reason, reason, JSON.stringify(password));
      assert.match(String(body.message), reason === 'weak' ? /easy to guess: .+\. Choose/ : /Choose/);
    }
    // Refused before the current password is checked: no budget spent, no check run.
    assert.deepEqual(
      (await eventsAbout(test, email)).filter((e) => e.startsWith('sign-in-failed')),
      [],
    );
    assert.equal((await browser.get('/api/auth/me')).statusCode, 200);
    await signedIn(test, email, OWN_PASSWORD);
  });

  it('takes a passphrase of ordinary words, which then signs in', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const browser = await signedIn(test, email);
    const passphrase = 'copper kettle in the orchard';
    const response = await changePassword(browser, OWN_PASSWORD, passphrase);
    assert.equal(response.statusCode, 200, response.body);
    await signedIn(test, email, passphrase);
  });

  it('refuses a new password that contains the temporary one it replaces (unchanged), then takes one of the person’s own', async (t) => {
    const test = await testAppFor(t);
    const person = await freshAccount(test);
    const admin = test.client();
    assert.equal((await admin.login('admin@example.com')).statusCode, 200);
    const reset = await admin.request({
      method: 'POST',
      url: `/api/admin/users/${person.id}/password-reset`,
    });
    assert.equal(reset.statusCode, 200, reset.body);
    const temporary = reset.json<{ temporaryPassword: string }>().temporaryPassword;
    const browser = await signedIn(test, person.email, temporary);
    for (const kept of [`${temporary}!`, `mine: ${temporary.toUpperCase()}`, temporary.replaceAll('-', '')]) {
      const body = assertError(await changePassword(browser, temporary, kept), 422, 'PASSWORD_REFUSED');
      assert.equal(body.reason, 'unchanged', kept);
      assert.match(String(body.message), /temporary/);
    }
    assert.equal((await changePassword(browser, temporary, NEW_PASSWORD)).statusCode, 200);
    assert.equal((await test.client().login(person.email, `${temporary}!`)).statusCode, 401);
    await signedIn(test, person.email, NEW_PASSWORD);
  });

  it('answers 400 for bad bodies, never a 5xx', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const browser = await signedIn(test, email);
    for (const payload of [
      {},
      { currentPassword: OWN_PASSWORD },
      { currentPassword: OWN_PASSWORD, newPassword: 'twelve chars\u0000and more' },
      { currentPassword: 1, newPassword: NEW_PASSWORD },
      { currentPassword: OWN_PASSWORD, newPassword: NEW_PASSWORD, extra: true },
      { currentPassword: 'x'.repeat(1025), newPassword: NEW_PASSWORD },
    ])
      assertError(
        await browser.request({ method: 'POST', url: '/api/auth/password', payload }),
        400,
        'VALIDATION_ERROR',
      );
    assertError(
      await test.client().request({
        method: 'POST',
        url: '/api/auth/password',
        payload: { currentPassword: 'a', newPassword: 'b' },
      }),
      403,
      'CSRF_INVALID',
    );
  });

  it('keeps this browser a known device when its cookie is the account’s', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    await signedIn(test, email); // another browser: forgotten by the change
    const here = await signedIn(test, email);
    const device = here.cookie(DEVICE_COOKIE);
    assert.equal((await changePassword(here, OWN_PASSWORD, NEW_PASSWORD)).statusCode, 200);
    assert.equal(here.cookie(DEVICE_COOKIE), device);
    await here.request({ method: 'POST', url: '/api/auth/logout' });
    await here.fetchCsrf();
    assert.equal((await here.login(email, NEW_PASSWORD)).statusCode, 200);
    assert.deepEqual(
      (await eventsAbout(test, email)).filter((e) => e.startsWith('signed-in')).at(-1),
      'signed-in password',
    );
  });
});

describe('POST /api/auth/password racing what ends it', () => {
  /** A change by `browser` held at the new password's hash (its current one already checked). */
  async function heldChange(hasher: HeldHasher, browser: Parameters<typeof changePassword>[0]) {
    hasher.holdChecks();
    const change = changePassword(browser, OWN_PASSWORD, NEW_PASSWORD);
    await hasher.untilHeld(1);
    assert.equal(hasher.releaseNext(0), OWN_PASSWORD, 'the current password was checked first');
    await hasher.untilHeld(1);
    assert.equal(hasher.held[0]!.password, NEW_PASSWORD, 'the new one is being hashed');
    return { change }; // not awaited here: it answers once the hash is let through
  }

  it('lets an admin’s reset made while the change was in flight stand: 401, and the temporary password signs in', async (t) => {
    const hasher = new HeldHasher();
    const test = await testAppFor(t, { hasher });
    const person = await freshAccount(test);
    const holder = await signedIn(test, person.email);
    const admin = test.client();
    assert.equal((await admin.login('admin@example.com')).statusCode, 200);
    const { change } = await heldChange(hasher, holder);

    const reset = admin.request({ method: 'POST', url: `/api/admin/users/${person.id}/password-reset` });
    await hasher.untilHeld(2); // the temporary password's hash, after the held one
    hasher.held.splice(1, 1)[0]!.release(0);
    const resetAnswer = await reset;
    assert.equal(resetAnswer.statusCode, 200, resetAnswer.body);
    hasher.letThrough();
    assertError(await change, 401, 'UNAUTHENTICATED');

    const temporary = resetAnswer.json<{ temporaryPassword: string }>().temporaryPassword;
    assert.equal((await test.client().login(person.email, NEW_PASSWORD)).statusCode, 401);
    assert.equal((await test.client().login(person.email, temporary)).statusCode, 200);
    assert.equal((await holder.get('/api/auth/me')).statusCode, 401, 'the holder has no session');
  });

  it('lets the end of the session made while the change was in flight stand: 401, the password unchanged', async (t) => {
    const hasher = new HeldHasher();
    const test = await testAppFor(t, { hasher });
    const person = await freshAccount(test);
    const holder = await signedIn(test, person.email);
    const owner = await signedIn(test, person.email);
    const { change } = await heldChange(hasher, holder);

    const { sessions } = (await owner.get('/api/auth/sessions')).json<{
      sessions: { id: string; current: boolean }[];
    }>();
    const theirs = sessions.find((session) => !session.current)!;
    assert.equal(
      (await owner.request({ method: 'DELETE', url: `/api/auth/sessions/${theirs.id}` })).statusCode,
      204,
    );
    hasher.letThrough();
    assertError(await change, 401, 'UNAUTHENTICATED');

    assert.equal((await test.client().login(person.email, NEW_PASSWORD)).statusCode, 401);
    assert.equal((await owner.get('/api/auth/me')).statusCode, 200, 'the owner stays signed in');
    assert.deepEqual(
      (await eventsAbout(test, person.email)).filter((event) => event.startsWith('password-changed')),
      [],
      'no change, so no event',
    );
  });
});

/** A Pwned Passwords range API on a port of this machine: `lines` by prefix; `mode` says how it misbehaves. */
async function rangeApi(lines: (prefix: string) => string, mode: 'ok' | 'broken' = 'ok') {
  const asked: string[] = [];
  const server: Server = createServer((request, response) => {
    asked.push(request.url ?? '');
    const prefix = /^\/range\/([0-9A-F]{5})$/.exec(request.url ?? '')?.[1];
    if (mode === 'broken') request.socket.destroy();
    else if (!prefix) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': 'text/plain' }).end(lines(prefix));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const sha1 = async (text: string) =>
  (await import('node:crypto')).createHash('sha1').update(text).digest('hex').toUpperCase();

describe('POST /api/auth/password with PASSWORD_BREACH_API', () => {
  it('refuses a password the range API lists (only the 5-character prefix leaves), lets an unlisted one through', async (t) => {
    const listed = await sha1(NEW_PASSWORD);
    const api = await rangeApi((prefix) =>
      prefix === listed.slice(0, 5)
        ? `0018A45C4D1DEF81644B54AB7F969B88D65:1\r\n${listed.slice(5)}:73\r\nFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:0`
        : '0018A45C4D1DEF81644B54AB7F969B88D65:0',
    );
    t.after(api.close);
    const test = await testAppFor(t, { env: { PASSWORD_BREACH_API: api.url } });
    const { email } = await freshAccount(test);
    const browser = await signedIn(test, email);
    const body = assertError(
      await changePassword(browser, OWN_PASSWORD, NEW_PASSWORD),
      422,
      'PASSWORD_REFUSED',
    );
    assert.equal(body.reason, 'breached');
    assert.deepEqual(api.asked, [`/range/${listed.slice(0, 5)}`]);
    assert.equal(
      (await changePassword(browser, OWN_PASSWORD, 'amber quarry whistle 58 gently')).statusCode,
      200,
    );
  });

  it('lets the change through when the API does not answer, unless PASSWORD_BREACH_API_REQUIRED: then 503 and nothing changed', async (t) => {
    const api = await rangeApi(() => '', 'broken');
    t.after(api.close);
    const lenient = await testAppFor(t, { env: { PASSWORD_BREACH_API: api.url } });
    const first = await freshAccount(lenient);
    assert.equal(
      (await changePassword(await signedIn(lenient, first.email), OWN_PASSWORD, NEW_PASSWORD)).statusCode,
      200,
    );
    await lenient.close();

    const strict = await testAppFor(t, {
      env: { PASSWORD_BREACH_API: api.url, PASSWORD_BREACH_API_REQUIRED: 'true' },
    });
    const { email } = await freshAccount(strict);
    const browser = await signedIn(strict, email);
    const body = assertError(
      await changePassword(browser, OWN_PASSWORD, NEW_PASSWORD),
      503,
      'PASSWORD_CHECK_UNAVAILABLE',
    );
    assert.equal(typeof body.retryAfter, 'number');
    assert.equal((await browser.get('/api/auth/me')).statusCode, 200, 'the session stands');
    await signedIn(strict, email, OWN_PASSWORD);
  });
});
