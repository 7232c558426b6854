// GET /api/admin/login-locks (docs/rules.md#known-devices) on the memory store: once per lock.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import type { LoginLock } from '../../src/client/index.ts';
import { createTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';

after(closeTestDatabases);

const WRONG = 'not-the-password';
const URL = '/api/admin/login-locks';

type LockJson = LoginLock;

/** Locks bob's account, one address and carol's known device; returns the app, an admin and the device id. */
async function lockThree(testApp: TestApp) {
  const { client, clock } = testApp;
  const carol = client();
  assert.equal((await carol.login('carol@example.com')).statusCode, 200);
  const device = carol.cookie(DEVICE_COOKIE)!.split('.')[1]!;
  for (let i = 0; i < 3; i++) await client().login('bob@example.com', WRONG);
  clock.advance(60_000);
  const sprayer = client({ remoteAddress: '203.0.113.77' });
  for (const email of ['x@example.com', 'y@example.com', 'z@example.com', 'w@example.com'])
    await sprayer.login(email, WRONG);
  clock.advance(60_000);
  for (let i = 0; i < 2; i++) await carol.login('carol@example.com', WRONG);
  // Refusals after each lock: the lists and events must not grow with them.
  for (let i = 0; i < 5; i++) {
    await client().login('bob@example.com');
    await sprayer.login('alice@example.com');
    await carol.login('carol@example.com');
  }
  const admin = client();
  assert.equal((await admin.login('admin@example.com')).statusCode, 200);
  return { admin, device };
}

const LOCK_ENV = {
  RATE_LIMIT_LOGIN_ACCOUNT: '3/15m',
  RATE_LIMIT_LOGIN_IP: '4/15m',
  RATE_LIMIT_LOGIN_DEVICE: '2/15m',
};

async function lockApp(t: { after(fn: () => Promise<void>): void }, options: TestAppOptions = {}) {
  const testApp = await createTestApp({ ...options, env: { ...LOCK_ENV, ...options.env } });
  t.after(testApp.close);
  await testApp.database.db.query('UPDATE users SET devices_valid_after = NULL');
  await testApp.database.db.query('DELETE FROM security_events');
  return testApp;
}

describe(`GET ${URL}`, () => {
  it('lists each locked account, address and known device with its failures and wait', async (t) => {
    const testApp = await lockApp(t);
    const { admin, device } = await lockThree(testApp);
    const response = await admin.get(URL);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json<{ locks: LockJson[] }>().locks, [
      { control: 'login-account', email: 'bob@example.com', failures: 3, retryAfter: 780 },
      { control: 'login-ip', address: '203.0.113.77', failures: 4, retryAfter: 840 },
      { control: 'login-device', device, failures: 2, retryAfter: 900 },
    ]);
  });

  it('records one lock-started event per lock, not one per refused attempt', async (t) => {
    const testApp = await lockApp(t);
    await lockThree(testApp);
    await testApp.app.services.securityEvents.flush();
    const rows = await testApp.database.db.query<{ type: string; control: string; who: string }>(
      `SELECT type, control, coalesce(email, address) AS who FROM security_events
       WHERE type = 'lock-started' ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [r.control, r.who]),
      [
        ['login-account', 'bob@example.com'],
        ['login-ip', '203.0.113.77'],
        ['login-device', 'carol@example.com'],
      ],
    );
  });

  it('drops a lock once its window frees an attempt, and an account an admin reset', async (t) => {
    const testApp = await lockApp(t);
    const { admin } = await lockThree(testApp);
    const reset = await admin.request({
      method: 'POST',
      url: `${URL}/reset`,
      payload: { email: ' BOB@example.com' },
    });
    assert.equal(reset.statusCode, 204);
    const controls = async () =>
      (await admin.get(URL)).json<{ locks: LockJson[] }>().locks.map((lock) => lock.control);
    assert.deepEqual(await controls(), ['login-ip', 'login-device']);
    testApp.clock.advance(840_000);
    assert.deepEqual(await controls(), ['login-device']);
    testApp.clock.advance(60_000);
    assert.deepEqual(await controls(), []);
    await testApp.app.services.securityEvents.flush();
    const resets = await testApp.database.db.query<{ email: string; actor_id: number }>(
      "SELECT email, actor_id FROM security_events WHERE type = 'admin-reset'",
    );
    assert.deepEqual(
      resets.map((r) => [r.email, r.actor_id]),
      [['bob@example.com', 4]],
    );
  });

  it('is for admins only', async (t) => {
    const { client } = await lockApp(t);
    assertError(await client().get(URL), 401, 'UNAUTHENTICATED');
    const alice = client();
    await alice.login('alice@example.com');
    assertError(await alice.get(URL), 403, 'FORBIDDEN');
  });
});
