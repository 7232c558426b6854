// A sign-in racing a password change, a reset or a disable (docs/rules.md#accounts).
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { CliAccounts } from '../../src/accounts/cli-accounts.ts';
import { changePassword, freshAccount, NEW_PASSWORD, OWN_PASSWORD, signedIn } from '../helpers/accounts.ts';
import { type TestApp, TestClient } from '../helpers/app.ts';
import { closeTestDatabases, testHash } from '../helpers/database.ts';
import { twoInstances } from '../helpers/fleet.ts';
import { skipUnless } from '../helpers/services.ts';

const skip = (await skipUnless('redis')) || (await skipUnless('postgres'));
after(closeTestDatabases);

/** Budgets no test here reaches: the races, not the limits, are under test. */
const ROOMY = { RATE_LIMIT_LOGIN_ACCOUNT: '100000/15m', RATE_LIMIT_LOGIN_IP: '100000/15m' };

/**
 * Holds every change of the kinds under test open after it deleted the account's sessions: a
 * trigger makes the change's closing security event wait for an advisory lock this connection
 * holds, until `release`. `held` resolves once a change waits there.
 */
async function widenTheWindow(t: TestContext, url: string) {
  const key = Math.floor(Math.random() * 2 ** 30);
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  t.after(async () => {
    await setup.query('DROP TRIGGER IF EXISTS hold_change ON security_events');
    await setup.end();
  });
  await setup.query(`CREATE OR REPLACE FUNCTION hold_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_advisory_xact_lock_shared(${key}); RETURN NEW; END $$`);
  await setup.query(`CREATE OR REPLACE TRIGGER hold_change BEFORE INSERT ON security_events FOR EACH ROW
    WHEN (NEW.type IN ('password-changed', 'devices-forgotten', 'account-disabled'))
    EXECUTE FUNCTION hold_change()`);
  await setup.query('SELECT pg_advisory_lock($1)', [key]);
  const waiting = async (query: string) => {
    for (let tries = 0; tries < 400; tries++) {
      const { rows } = await setup.query(query, [key]);
      if (rows.length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.fail(`nothing waited: ${query}`);
  };
  return {
    /** Resolves once a change waits for the lock. */
    held: () => waiting(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`),
    /** Resolves once a sign-in's write waits for a row the held change locked. */
    rowWaited: () =>
      waiting(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')
                 AND $1::int IS NOT NULL AND query LIKE '%INSERT INTO sessions%'`),
    release: () => setup.query('SELECT pg_advisory_unlock($1)', [key]),
  };
}

/** The account's sessions and known devices as stored. */
async function leftOf(app: TestApp, userId: number) {
  const [row] = await app.database.db.query<{ sessions: number; devices: number }>(
    `SELECT (SELECT count(*)::int FROM sessions WHERE user_id = $1) AS sessions,
            (SELECT count(*)::int FROM known_devices WHERE user_id = $1) AS devices`,
    [userId],
  );
  return row!;
}

type Change = (a: TestApp, account: { email: string; id: number }, owner: TestClient) => Promise<void>;

/** Each change that must end every sign-in it overlaps, and the sessions and devices it leaves. */
const changes: Record<string, { run: Change; leaves: { sessions: number; devices: number } }> = {
  "the owner's password change": {
    async run(_a, _account, owner) {
      assert.equal((await changePassword(owner, OWN_PASSWORD, NEW_PASSWORD)).statusCode, 200);
    },
    leaves: { sessions: 1, devices: 1 }, // the owner's own browser
  },
  "an admin's reset": {
    async run(a, account) {
      const admin = await signedIn(a, (await freshAccount(a, 'admin')).email);
      const reset = await admin.request({
        method: 'POST',
        url: `/api/admin/users/${account.id}/password-reset`,
      });
      assert.equal(reset.statusCode, 200, reset.body);
    },
    leaves: { sessions: 0, devices: 0 },
  },
  "the command line's set-password": {
    async run(a, account) {
      const accounts = new CliAccounts(a.database.db, {
        clock: a.clock,
        instance: 'test',
        hashPassword: testHash,
        rules: a.app.services.passwordRules,
      });
      await accounts.setPassword(account.email, NEW_PASSWORD);
    },
    leaves: { sessions: 0, devices: 0 },
  },
  'disabling the account': {
    async run(a, account) {
      const admin = await signedIn(a, (await freshAccount(a, 'admin')).email);
      const edit = await admin.request({
        method: 'PATCH',
        url: `/api/admin/users/${account.id}`,
        payload: { disabled: true },
      });
      assert.equal(edit.statusCode, 200, edit.body);
    },
    leaves: { sessions: 0, devices: 0 },
  },
};

describe('a sign-in overlapping a change of the password or a disable (PostgreSQL, two instances)', {
  skip,
}, () => {
  for (const [name, change] of Object.entries(changes)) {
    it(`fails, or ends with ${name}, when its write meets the change still open`, async (t) => {
      const { a, b } = await twoInstances(t, { ...ROOMY, SESSION_CACHE_TTL: '10m' });
      const account = await freshAccount(a);
      const owner = await signedIn(a, account.email);
      const gate = await widenTheWindow(t, a.database.url!);
      // The change deletes the sessions, then waits, still open, before its last event.
      const changed = change.run(a, account, owner);
      await gate.held();
      // Meanwhile the old password still checks out: the attacker's sign-in on the other instance.
      const attacker = new TestClient(b, '203.0.113.9');
      const signIn = attacker.login(account.email, OWN_PASSWORD);
      // Its write meets the account's row the change holds (checked against a snapshot that has the
      // old hash, it had inserted its session before it waited there; now it waits first).
      await gate.rowWaited();
      await gate.release();
      await changed;
      const answer = await signIn;
      assert.ok([200, 401].includes(answer.statusCode), answer.body);
      assert.equal((await attacker.get('/api/auth/me')).statusCode, 401, 'no session outlives the change');
      assert.deepEqual(await leftOf(a, account.id), change.leaves);
    });
  }

  it('leaves no session of an old password after any of many changes racing sign-ins on both instances', async (t) => {
    const { a, b } = await twoInstances(t, { ...ROOMY, SESSION_CACHE_TTL: '10m' });
    const account = await freshAccount(a);
    const owner = await signedIn(a, account.email);
    const TRIALS = 25;
    let survivors = 0;
    let signIns = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      let changing = true;
      // Three sign-in loops per instance with the password the owner is about to change.
      const loops = [a.app, a.app, a.app, b, b, b].map(async (app, n) => {
        while (changing) {
          const attacker = new TestClient(app, `203.0.113.${n + 1}`);
          await attacker.login(account.email, OWN_PASSWORD);
          signIns++;
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 5 + (trial % 5) * 3));
      assert.equal((await changePassword(owner, OWN_PASSWORD, NEW_PASSWORD)).statusCode, 200);
      changing = false;
      await Promise.all(loops);
      // Every session but the owner's rotated one ended with the change.
      survivors += (await leftOf(a, account.id)).sessions - 1;
      // Back to the old password for the next trial (no sign-in runs meanwhile).
      assert.equal((await changePassword(owner, NEW_PASSWORD, OWN_PASSWORD)).statusCode, 200);
    }
    t.diagnostic(`${signIns} sign-ins around ${TRIALS} changes`);
    assert.equal(survivors, 0);
  });
});
