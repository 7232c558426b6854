// docs/rules.md#known-devices: a lock an attacker sets does not keep out the owner's browser.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { createTestApp, type TestApp, type TestAppOptions, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { answeredOnClock } from '../helpers/http.ts';
import { assertRefused } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

const WRONG = 'not-the-password';
const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

/** An app whose accounts have no revoked devices left from an earlier test on this database. */
async function deviceApp(t: { after(fn: () => Promise<void>): void }, options: TestAppOptions = {}) {
  const testApp = await createTestApp(options);
  t.after(testApp.close);
  await testApp.database.db.query('UPDATE users SET devices_valid_after = NULL');
  return testApp;
}

/** A browser that logged in to `email` once (and out again): it holds the account's device cookie. */
async function ownersBrowser({ client }: TestApp, email: string): Promise<TestClient> {
  const browser = client();
  assert.equal((await browser.login(email)).statusCode, 200);
  assert.ok(browser.cookie(DEVICE_COOKIE), 'a device cookie is set at login');
  assert.equal((await browser.request({ method: 'POST', url: '/api/auth/logout' })).statusCode, 204);
  await browser.fetchCsrf();
  return browser;
}

async function lock({ client }: TestApp, email: string, failures: number): Promise<void> {
  const attacker = client();
  for (let i = 0; i < failures; i++) assert.equal((await attacker.login(email, WRONG)).statusCode, 401);
  assertRefused(await client().login(email), 'LOGIN_RATE_LIMIT', 'login-account');
}

const setCookieOf = (response: { headers: Record<string, unknown> }, name: string): string | undefined => {
  const header = response.headers['set-cookie'];
  const all = Array.isArray(header) ? header : header === undefined ? [] : [String(header)];
  return all.find((cookie: string) => cookie.startsWith(`${name}=`));
};

describe('POST /api/auth/login from a known device', () => {
  it('lets the owner’s browser in while the account is locked for everyone else', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' } });
    const owner = await ownersBrowser(app, ALICE);
    await lock(app, ALICE, 3);
    assert.equal((await owner.login(ALICE)).statusCode, 200, 'the known device gets in');
  });

  it('refuses a forged, tampered or foreign device cookie like any unknown client', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' } });
    const alices = await ownersBrowser(app, ALICE);
    const bobs = await ownersBrowser(app, BOB);
    await lock(app, BOB, 3);
    const value = bobs.cookie(DEVICE_COOKIE)!;
    const [version, device, user, issued, mac] = value.split('.') as [string, string, string, string, string];
    const flip = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
    for (const forged of [
      `${version}.${device}.${user}.${issued}.${flip(mac)}`, // signature changed
      `${version}.${flip(device)}.${user}.${issued}.${mac}`, // another device id under bob's signature
      `${version}.${device}.1.${issued}.${mac}`, // bob's cookie relabelled for alice's user id
      `d2.${device}.${user}.${issued}.${mac}`, // an unknown version
      'anything',
    ]) {
      const attacker = app.client();
      attacker.setCookie(DEVICE_COOKIE, forged);
      assertRefused(await attacker.login(BOB), 'LOGIN_RATE_LIMIT', 'login-account');
    }
    // Alice's genuine cookie is for alice: on bob's locked account it is an unknown device.
    assertRefused(await alices.login(BOB), 'LOGIN_RATE_LIMIT', 'login-account');
    assert.equal((await bobs.login(BOB)).statusCode, 200);
  });

  it('gives the address back its unit when another account’s device is refused by a locked account', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m' } });
    const alices = await ownersBrowser(app, ALICE);
    await lock(app, BOB, 1);
    // A valid device cookie skips the early looks; for bob's account it is an unknown device, so the
    // address's unit is reserved before the account's refuses, and must be given back.
    for (let i = 0; i < 5; i++)
      assertRefused(await alices.login(BOB, WRONG), 'LOGIN_RATE_LIMIT', 'login-account');
    const { controls } = (await alices.get('/api/rate-limits')).json<{
      controls: { control: string; limit: number; remaining: number }[];
    }>();
    const address = controls.find((c) => c.control === 'login-ip');
    assert.deepEqual(address && [address.limit, address.remaining], [100, 100], 'no failure was checked');
  });

  it('counts a known device’s own failures on login-device only, and refuses it past that budget', async (t) => {
    const app = await deviceApp(t, {
      env: {
        RATE_LIMIT_LOGIN_ACCOUNT: '2/15m',
        RATE_LIMIT_LOGIN_IP: '2/15m',
        RATE_LIMIT_LOGIN_DEVICE: '3/15m',
      },
    });
    const owner = await ownersBrowser(app, ALICE);
    for (let i = 0; i < 3; i++) assert.equal((await owner.login(ALICE, WRONG)).statusCode, 401);
    const refused = assertRefused(await owner.login(ALICE), 'LOGIN_RATE_LIMIT', 'login-device');
    assert.equal(refused.limit, 3);
    assert.equal(refused.retryAfter, 900);
    // Neither the account's budget nor the address's was spent: another browser on the same address gets in.
    const sameAddress = app.client({ remoteAddress: owner.remoteAddress });
    assert.equal((await sameAddress.login(ALICE)).statusCode, 200);
  });

  it('writes one security event per lock, for a device as for an account and an address, none per refusal', async (t) => {
    const app = await deviceApp(t, {
      env: {
        RATE_LIMIT_LOGIN_ACCOUNT: '2/15m',
        RATE_LIMIT_LOGIN_IP: '2/15m',
        RATE_LIMIT_LOGIN_DEVICE: '3/15m',
      },
    });
    await app.database.db.query('DELETE FROM security_events');
    const owner = await ownersBrowser(app, ALICE);
    // An employee looping wrong passwords from her own browser: the device's lock, then refusals.
    for (let i = 0; i < 3; i++) assert.equal((await owner.login(ALICE, WRONG)).statusCode, 401);
    for (let i = 0; i < 5; i++)
      assertRefused(await owner.login(ALICE, WRONG), 'LOGIN_RATE_LIMIT', 'login-device');
    // An attacker from one address: bob's account and the address lock together, then refusals.
    const attacker = app.client();
    for (let i = 0; i < 2; i++) assert.equal((await attacker.login(BOB, WRONG)).statusCode, 401);
    for (let i = 0; i < 5; i++)
      assertRefused(await attacker.login(BOB, WRONG), 'LOGIN_RATE_LIMIT', 'login-ip');
    for (let i = 0; i < 5; i++)
      assertRefused(await app.client().login(BOB), 'LOGIN_RATE_LIMIT', 'login-account');
    await app.app.services.securityEvents.flush();
    const events = await app.database.db.query<{ type: string; control: string; who: string }>(
      'SELECT type, control, coalesce(email, address) AS who FROM security_events ORDER BY id',
    );
    assert.deepEqual(
      events
        .filter((e) => e.type === 'lock-started')
        .map((e) => [e.type, e.control, e.who])
        .sort(),
      [
        ['lock-started', 'login-account', BOB],
        ['lock-started', 'login-device', ALICE],
        ['lock-started', 'login-ip', attacker.remoteAddress],
      ],
    );
    // Each failure, not each refusal, is in its account's own events (docs/rules.md#accounts).
    assert.deepEqual(
      events.filter((e) => e.type === 'sign-in-failed').map((e) => e.who),
      [ALICE, ALICE, ALICE, BOB, BOB],
    );
  });

  it('refuses a known device’s 11th failure by default: RATE_LIMIT_LOGIN_DEVICE is 10/15m', async (t) => {
    const app = await deviceApp(t);
    const owner = await ownersBrowser(app, ALICE);
    for (let i = 1; i <= 10; i++)
      assert.equal((await owner.login(ALICE, WRONG)).statusCode, 401, `failure ${i}`);
    const refused = assertRefused(await owner.login(ALICE), 'LOGIN_RATE_LIMIT', 'login-device');
    assert.deepEqual(refused.policy, { name: 'login-device', q: 10, w: 900 });
    assert.equal(refused.retryAfter, 900);
  });

  it('never lets parallel wrong guesses from one known device exceed its budget', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_DEVICE: '5/15m' } });
    const owner = await ownersBrowser(app, CAROL);
    const guesses = Array.from({ length: 25 }, () => owner.login(CAROL, WRONG));
    const codes = (await answeredOnClock(app.clock, guesses)).map((r) => r.json<{ code: string }>().code);
    assert.equal(codes.filter((c) => c === 'INVALID_CREDENTIALS').length, 5);
    assert.equal(codes.filter((c) => c === 'LOGIN_RATE_LIMIT').length, 20);
  });

  it('forgets a device cookie once it expires (DEVICE_COOKIE_TTL)', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '1/24h', DEVICE_COOKIE_TTL: '2h' } });
    const owner = await ownersBrowser(app, ALICE);
    await lock(app, ALICE, 1);
    const reportsDevice = async () =>
      (await owner.get('/api/rate-limits'))
        .json<{ controls: { control: string }[] }>()
        .controls.some((c) => c.control === 'login-device');
    app.clock.advance(2 * 3_600_000 - 1);
    assert.equal(await reportsDevice(), true, 'still known a millisecond before');
    app.clock.advance(1);
    assert.equal(await reportsDevice(), false);
    assertRefused(await owner.login(ALICE), 'LOGIN_RATE_LIMIT', 'login-account');
  });

  it('leaves the account locked for unknown clients when its owner logs in from a known device', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' } });
    const owner = await ownersBrowser(app, ALICE);
    await lock(app, ALICE, 2);
    assert.equal((await owner.login(ALICE)).statusCode, 200);
    // Clearing it here would hand the attacker a fresh budget of guesses at every login of the owner.
    assertRefused(await app.client().login(ALICE), 'LOGIN_RATE_LIMIT', 'login-account');
  });

  it('keeps the account’s devices known when an admin resets its lock: the owner’s browser still gets in', async (t) => {
    const app = await deviceApp(t); // the default budgets: ten failures per account
    const owner = await ownersBrowser(app, BOB);
    app.clock.advance(1);
    await lock(app, BOB, 10); // from elsewhere
    const admin = app.client();
    await admin.login('admin@example.com');
    const reset = await admin.request({
      method: 'POST',
      url: '/api/admin/login-locks/reset',
      payload: { email: 'Bob@Example.com' },
    });
    assert.equal(reset.statusCode, 204);
    // The attacker's next ten guesses lock the account for unknown devices again, and no more.
    app.clock.advance(1);
    await lock(app, BOB, 10);
    assert.equal((await owner.login(BOB)).statusCode, 200, 'the owner’s own browser is still a known device');
  });
});

describe('the tp_device cookie', () => {
  it('is HttpOnly, SameSite=Strict, for /api/auth only, for DEVICE_COOKIE_TTL, and not Secure over http', async (t) => {
    const app = await deviceApp(t);
    const response = await app.client().login(ALICE);
    const cookie = setCookieOf(response, DEVICE_COOKIE)!;
    assert.ok(cookie);
    const attributes = cookie.split(/;\s*/).slice(1);
    assert.deepEqual(attributes.sort(), [
      'HttpOnly',
      'Max-Age=15552000',
      'Path=/api/auth',
      'SameSite=Strict',
    ]);
  });

  it('is Secure when served over HTTPS', async (t) => {
    const app = await deviceApp(t, { env: { TRUST_PROXY: '1' } });
    const browser = app.client();
    await browser.fetchCsrf();
    const response = await browser.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: ALICE, password: 'demo-password' },
      headers: { 'x-forwarded-proto': 'https' },
    });
    assert.equal(response.statusCode, 200);
    assert.match(setCookieOf(response, DEVICE_COOKIE)!, /; Secure/);
  });

  it('is kept at logout, and replaced by a fresh one at every login', async (t) => {
    const app = await deviceApp(t);
    const browser = app.client();
    const first = setCookieOf(await browser.login(ALICE), DEVICE_COOKIE);
    const logout = await browser.request({ method: 'POST', url: '/api/auth/logout' });
    assert.equal(setCookieOf(logout, DEVICE_COOKIE), undefined, 'logout leaves it alone');
    assert.ok(browser.cookie(DEVICE_COOKIE));
    await browser.fetchCsrf();
    const second = setCookieOf(await browser.login(ALICE), DEVICE_COOKIE);
    assert.ok(first && second && first !== second);
    const [deviceOf] = [(cookie: string) => cookie.split(';')[0]!.split('.')[1]];
    assert.notEqual(deviceOf(first), deviceOf(second), 'a new device id');
  });

  it('makes GET /api/rate-limits report login-device while it is valid', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_DEVICE: '4/15m' } });
    const owner = await ownersBrowser(app, ALICE);
    await owner.login(ALICE, WRONG);
    const controls = (await owner.get('/api/rate-limits')).json<{
      controls: { control: string; limit: number; remaining: number }[];
    }>().controls;
    const device = controls.find((c) => c.control === 'login-device');
    assert.deepEqual(device && [device.limit, device.remaining], [4, 3]);
    owner.setCookie(DEVICE_COOKIE, 'forged');
    const without = (await owner.get('/api/rate-limits')).json<{ controls: { control: string }[] }>();
    assert.ok(!without.controls.some((c) => c.control === 'login-device'));
  });

  it('makes GET /api/rate-limits call a forgotten device unknown, as the sign-in does', async (t) => {
    const app = await deviceApp(t);
    const owner = await ownersBrowser(app, ALICE);
    const reports = async () =>
      (await owner.get('/api/rate-limits'))
        .json<{ controls: { control: string }[] }>()
        .controls.map((c) => c.control);
    assert.ok((await reports()).includes('login-device'));
    // Alice forgets that browser from another one (its cookie is still valid and unrevoked).
    app.clock.advance(1000);
    const elsewhere = app.client();
    assert.equal((await elsewhere.login(ALICE)).statusCode, 200);
    const { devices } = (await elsewhere.get('/api/auth/devices')).json<{
      devices: { id: number; createdAt: string }[];
    }>();
    const first = devices.sort((x, y) => x.createdAt.localeCompare(y.createdAt))[0]!;
    assert.equal(
      (await elsewhere.request({ method: 'DELETE', url: `/api/auth/devices/${first.id}` })).statusCode,
      204,
    );
    assert.ok(!(await reports()).includes('login-device'), 'an unknown device for the report');
    // And for the sign-in: its failures count against the account and the address, not the device.
    const failed = await owner.login(ALICE, WRONG);
    assert.equal(failed.statusCode, 401);
    assert.deepEqual(
      await reports(),
      (await reports()).filter((c) => c !== 'login-device'),
    );
  });
});

const CAROL = 'carol@example.com';

describe('a device cookie issued before the known devices were rows (the upgrade to migration 012)', () => {
  /** The owner's browser, its cookie made row-less as one issued before the upgrade would be. */
  async function browserFromBeforeTheUpgrade(app: TestApp, email: string): Promise<TestClient> {
    const owner = await ownersBrowser(app, email);
    await app.database.db.query(
      `DELETE FROM known_devices WHERE user_id = (SELECT id FROM users WHERE email = $1)`,
      [email],
    );
    app.clock.advance(1000);
    await app.database.db.query('UPDATE users SET devices_rowless_before = $2 WHERE email = $1', [
      email,
      new Date(app.clock.now()).toISOString(),
    ]);
    return owner;
  }

  it('still lets the owner’s browser in while the account is locked', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' } });
    const owner = await browserFromBeforeTheUpgrade(app, ALICE);
    await lock(app, ALICE, 3);
    assert.equal((await owner.login(ALICE)).statusCode, 200, 'the row-less cookie is a known device');
  });

  it('is forgotten with the other devices when the password changes in another browser', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' } });
    const old = await browserFromBeforeTheUpgrade(app, ALICE);
    const elsewhere = app.client();
    assert.equal((await elsewhere.login(ALICE)).statusCode, 200);
    const newPassword = 'violet harbour cinder 93 slowly';
    const changed = await elsewhere.request({
      method: 'POST',
      url: '/api/auth/password',
      payload: { currentPassword: 'demo-password', newPassword },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    await lock(app, ALICE, 3);
    assertRefused(await old.login(ALICE, newPassword), 'LOGIN_RATE_LIMIT', 'login-account');
  });

  it('is unknown when issued after the upgrade without a row (a forgotten device)', async (t) => {
    const app = await deviceApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' } });
    const owner = await ownersBrowser(app, ALICE);
    await app.database.db.query('UPDATE users SET devices_rowless_before = $2 WHERE email = $1', [
      ALICE,
      new Date(app.clock.now() - 60_000).toISOString(),
    ]);
    await app.database.db.query(
      "DELETE FROM known_devices WHERE user_id = (SELECT id FROM users WHERE email = 'alice@example.com')",
    );
    await lock(app, ALICE, 3);
    assertRefused(await owner.login(ALICE), 'LOGIN_RATE_LIMIT', 'login-account');
  });
});
