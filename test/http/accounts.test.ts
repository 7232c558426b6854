// Accounts for a real deployment (docs/rules.md#running-it): production defaults, the first admin.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CliAccounts } from '../../src/accounts/cli-accounts.ts';
import { buildApp } from '../../src/app.ts';
import { DEVICE_COOKIE, DeviceCookies } from '../../src/auth/devices.ts';
import { PasswordRules } from '../../src/auth/password-rules.ts';
import { systemClock } from '../../src/clock.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { UsersRepository } from '../../src/db/repositories/users.ts';
import { DEMO_ACCOUNTS } from '../../src/db/seed.ts';
import { createTestApp, DEMO_PASSWORD, TestClient, testConfig } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind, privateTestDatabase, testHash } from '../helpers/database.ts';
import { assertError, taskSnapshot } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const skipPostgres = await skipUnless('postgres');
const PRODUCTION = { NODE_ENV: 'production', LOG_LEVEL: 'silent' };
const ADMIN = {
  BOOTSTRAP_ADMIN_EMAIL: 'Root@Example.org',
  BOOTSTRAP_ADMIN_PASSWORD: 'a long first password',
};
const CAROL = 'carol@example.com';
const CAROL_ID = 3;

const accountsOn = (db: Database) =>
  new CliAccounts(db, {
    clock: systemClock,
    instance: 'test',
    hashPassword: testHash,
    rules: new PasswordRules({ breachApi: null, breachApiRequired: false }),
  });

/** A database of its own with no account: the build's template in a directory, or a PostgreSQL schema. */
async function emptyDatabase(kind: DatabaseKind): Promise<{ db: Database; close(): Promise<void> }> {
  if (kind === 'postgres') return privateTestDatabase(kind, { prepared: false });
  const dataDir = await mkdtemp(join(tmpdir(), 'tp-accounts-'));
  const db = await openDatabase({ databaseUrl: null, dataDir });
  return {
    db,
    async close() {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A production app on an empty database of its own. */
async function productionApp(kind: DatabaseKind, env: Record<string, string> = {}) {
  const database = await emptyDatabase(kind);
  const app = await buildApp(testConfig({ ...PRODUCTION, ...env }), { database: database.db });
  await app.ready();
  return { app, database, client: () => new TestClient(app, '198.51.100.7') };
}

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  const skip = kind === 'postgres' && skipPostgres;

  describe(`a production start (${kind})`, { skip }, () => {
    it('creates no demo account, and says that no admin may sign in', async (t) => {
      const { app, database, client } = await productionApp(kind);
      t.after(async () => {
        await app.close();
        await database.close();
      });
      assert.equal(app.seededDemo, false);
      assert.equal(app.bootstrapAdmin, 'no-admin');
      assert.deepEqual(await database.db.query('SELECT id FROM users'), []);
      assertError(await client().login(DEMO_ACCOUNTS[3].email), 401, 'INVALID_CREDENTIALS');
    });

    it('still seeds the demo data when SEED_DEMO=true asks for it', async (t) => {
      const { app, database, client } = await productionApp(kind, { SEED_DEMO: 'true' });
      t.after(async () => {
        await app.close();
        await database.close();
      });
      assert.equal(app.seededDemo, true);
      assert.equal((await client().login(DEMO_ACCOUNTS[3].email)).statusCode, 200);
    });

    it('creates the first admin from BOOTSTRAP_ADMIN_*, once, with its security event', async (t) => {
      const { app, database, client } = await productionApp(kind, ADMIN);
      t.after(() => database.close());
      assert.equal(app.bootstrapAdmin, 'created');
      const admin = client();
      const login = await admin.login('root@example.org', ADMIN.BOOTSTRAP_ADMIN_PASSWORD);
      assert.equal(login.statusCode, 200, login.body);
      assert.equal(login.json<{ user: { role: string } }>().user.role, 'admin');
      const events = await admin.get('/api/admin/security-events');
      assert.deepEqual(
        events
          .json<{ events: { type: string; control: string; email: string }[] }>()
          .events.map((e) => [e.type, e.control, e.email]),
        [
          ['signed-in-new-device', 'password', 'root@example.org'],
          ['account-created', 'bootstrap-admin', 'root@example.org'],
        ],
      );
      await app.close();

      // Started again (the variables still set): an admin exists, so nothing is created or changed.
      const again = await buildApp(
        testConfig({ ...PRODUCTION, ...ADMIN, BOOTSTRAP_ADMIN_PASSWORD: 'another first password' }),
        {
          database: database.db,
        },
      );
      assert.equal(again.bootstrapAdmin, 'admin-exists');
      assert.equal((await database.db.query('SELECT id FROM users')).length, 1);
      const stillOld = await new TestClient(again, '198.51.100.8').login(
        'root@example.org',
        'another first password',
      );
      assert.equal(stillOld.statusCode, 401);
      await again.close();
    });
  });
}

describe('the first admin with several instances starting at once (postgres)', { skip: skipPostgres }, () => {
  it('is created once', async (t) => {
    const database = await privateTestDatabase('postgres', { prepared: false });
    t.after(() => database.close());
    const apps = await Promise.all(
      [1, 2, 3].map(() => buildApp(testConfig({ ...PRODUCTION, ...ADMIN }), { database: database.db })),
    );
    for (const app of apps) await app.close();
    assert.deepEqual(apps.map((app) => app.bootstrapAdmin).sort(), [
      'admin-exists',
      'admin-exists',
      'created',
    ]);
    const rows = await database.db.query<{ role: string }>('SELECT role FROM users');
    assert.deepEqual(rows, [{ role: 'admin' }]);
  });
});

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`a disabled account (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('loses its sessions at once, and its device cookie is no longer known', async (t) => {
      const test = await createTestApp({ database: kind });
      const accounts = accountsOn(test.database.db);
      t.after(async () => {
        await accounts.enable(CAROL);
        await test.close();
      });
      const carol = test.client();
      assert.equal((await carol.login(CAROL)).statusCode, 200);
      const device = carol.cookie(DEVICE_COOKIE)!;
      assert.equal((await carol.get('/api/auth/me')).statusCode, 200);

      assert.equal(await accounts.disable(CAROL), true);
      assert.equal(await accounts.disable(CAROL), false, 'disabled already: nothing changes');
      assertError(await carol.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.deepEqual(
        await test.database.db.query('SELECT 1 FROM sessions WHERE user_id = $1', [CAROL_ID]),
        [],
      );
      const [row] = await test.database.db.query<{ revoked: boolean }>(
        'SELECT devices_valid_after >= disabled_at AS revoked FROM users WHERE id = $1',
        [CAROL_ID],
      );
      assert.equal(row?.revoked, true);
      // Enabled again, the device that signed in before is an unknown device now.
      await accounts.enable(CAROL);
      const claim = test.app.services.devices.read(device)!;
      const standing = await new UsersRepository(test.database.db).deviceStanding(CAROL_ID, claim);
      assert.ok(standing?.devicesValidAfter != null && claim.issuedAt <= standing.devicesValidAfter);
      assert.equal(DeviceCookies.known(claim, { ...standing, userId: CAROL_ID }), false);
    });

    it('is refused at login exactly as a wrong password is, and counted the same', async (t) => {
      const test = await createTestApp({ database: kind, env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' } });
      const accounts = accountsOn(test.database.db);
      t.after(async () => {
        await accounts.enable(CAROL);
        await test.close();
      });
      await accounts.disable(CAROL);
      const disabled = await test.client().login(CAROL, DEMO_PASSWORD);
      const wrong = await test.client().login('alice@example.com', 'not-the-password');
      assertError(disabled, 401, 'INVALID_CREDENTIALS');
      assert.deepEqual(disabled.json(), wrong.json());
      assert.deepEqual(Object.keys(disabled.headers).sort(), Object.keys(wrong.headers).sort());
      // The right password is a failure too: the account's budget (2) is spent by the second.
      assertError(await test.client().login(CAROL, DEMO_PASSWORD), 401, 'INVALID_CREDENTIALS');
      assertError(await test.client().login(CAROL, DEMO_PASSWORD), 429, 'LOGIN_RATE_LIMIT');
    });

    it('is no reassignment target and not among the employees', async (t) => {
      const test = await createTestApp({ database: kind });
      const accounts = accountsOn(test.database.db);
      t.after(async () => {
        await accounts.enable(CAROL);
        await test.close();
      });
      await accounts.disable(CAROL);
      const alice = test.client();
      await alice.login('alice@example.com');
      const employees = (await alice.get('/api/employee/employees')).json<{ employees: { id: number }[] }>();
      assert.deepEqual(
        employees.employees.map((e) => e.id),
        [1, 2],
      );
      const before = await taskSnapshot(test);
      const bulk = await alice.request({
        method: 'PATCH',
        url: '/api/employee/tasks/bulk',
        payload: { taskIds: [1, 2], assigneeId: CAROL_ID },
      });
      assertError(bulk, 422, 'ASSIGNEE_NOT_FOUND');
      assert.deepEqual(await taskSnapshot(test), before);
      // Enabled again, it is a target once more.
      await accounts.enable(CAROL);
      const again = await alice.request({
        method: 'PATCH',
        url: '/api/employee/tasks/bulk',
        payload: { taskIds: [1], assigneeId: CAROL_ID },
      });
      assert.equal(again.statusCode, 200);
      assert.equal((await alice.login(CAROL)).statusCode, 200);
    });
  });
}
