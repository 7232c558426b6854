// The per-account cap on events (docs/rules.md#events-about-one-account), on both databases.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import {
  EVENT_WINDOWS_KEPT_MS,
  type NewSecurityEvent,
  SecurityEventsRepository,
} from '../../src/db/repositories/security-events.ts';
import { SESSIONS_PER_ACCOUNT_MAX } from '../../src/db/repositories/sessions.ts';
import { EVENT_WINDOW_MS, EVENTS_PER_WINDOW, SUMMARY_ADDRESSES } from '../../src/security-event.ts';
import { freshAccount, OWN_PASSWORD, signedIn } from '../helpers/accounts.ts';
import { type TestApp, TestClient, testAppFor, testConfig } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind, testDatabase } from '../helpers/database.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);
const skipPostgres = await skipUnless('postgres');

/** Sign-ins from three addresses in turn: more than the per-address request budget allows by default. */
const ENV = { RATE_LIMIT_UNAUTHENTICATED: '100000/15m' };
const ADDRESSES = ['203.0.113.1', '203.0.113.2', '203.0.113.3'];

interface EventJson {
  id: number;
  at: string;
  type: string;
  control: string;
  email: string | null;
  address: string | null;
  actorId: number | null;
  count?: number;
  lastAt?: string;
  addresses?: string[];
  moreAddresses?: boolean;
}

interface Row {
  type: string;
  control: string;
  actor_id: number | null;
  repeats: number | null;
  addresses: string[] | null;
  more_addresses: boolean | null;
}

/** Every stored row about `email` in the window starting at `start`, oldest first. */
async function rowsAbout(
  test: { database: TestApp['database'] },
  email: string,
  start: number,
): Promise<Row[]> {
  return test.database.db.query<Row>(
    `SELECT type, control, actor_id, repeats, addresses, more_addresses FROM security_events
      WHERE email = $1 AND at >= to_timestamp($2 / 1000.0) AND at < to_timestamp($3 / 1000.0) ORDER BY at, id`,
    [email, start, start + EVENT_WINDOW_MS],
  );
}

/** Own rows by kind, and each summary as `type control actor: repeats`. */
function tally(rows: readonly Row[]): { own: Record<string, number>; summaries: Record<string, number> } {
  const own: Record<string, number> = {};
  const summaries: Record<string, number> = {};
  for (const row of rows) {
    if (row.repeats === null) own[row.type] = (own[row.type] ?? 0) + 1;
    else summaries[`${row.type} ${row.control} ${row.actor_id ?? '-'}`] = row.repeats;
  }
  return { own, summaries };
}

const ownRows = (rows: readonly Row[]) => rows.filter((row) => row.repeats === null).length;
const windowStartOf = (ms: number) => Math.floor(ms / EVENT_WINDOW_MS) * EVENT_WINDOW_MS;

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`the cap on events about one account (${kind})`, {
    skip: kind === 'postgres' && skipPostgres,
  }, () => {
    it('keeps 100 events of an account per ten minutes as rows, the first of each kind always, and counts the rest in one summary per kind', async (t) => {
      const test = await testAppFor(t, { database: kind, env: ENV });
      // The window starts now: the test's sign-ins, a second apart, all fall in it.
      const start = windowStartOf(test.clock.now()) + EVENT_WINDOW_MS;
      test.clock.set(start);
      const { email, id } = await freshAccount(test);
      const signIns = 160;
      let last: TestClient | null = null;
      for (let n = 0; n < signIns; n++) {
        if (n > 0) test.clock.advance(1000);
        last = test.client({ remoteAddress: ADDRESSES[n % ADDRESSES.length] });
        assert.equal((await last.login(email, OWN_PASSWORD)).statusCode, 200);
      }
      const lastSignIn = test.clock.now();
      // Each sign-in from a new browser is an event; past the 50 sessions an account keeps, each
      // also ends one: 160 + 110 events. Sign-in 75 stores the 99th and 100th (50 + 25 × 2).
      const ended = signIns - SESSIONS_PER_ACCOUNT_MAX;
      const ownSignIns = 75;
      assert.equal(ownSignIns + (ownSignIns - SESSIONS_PER_ACCOUNT_MAX), EVENTS_PER_WINDOW);

      // Past the cap, a kind not seen yet in the window still gets its row: the first failed
      // sign-in and the first change an admin makes; their repeats are counted.
      test.clock.advance(1000);
      for (let n = 0; n < 2; n++) {
        const stranger = test.client({ remoteAddress: '198.51.100.77' });
        assert.equal((await stranger.login(email, 'not the password at all')).statusCode, 401);
      }
      const adminAccount = await freshAccount(test, 'admin');
      const admin = await signedIn(test, adminAccount.email);
      for (const name of ['Renamed Once', 'Renamed Twice']) {
        const renamed = await admin.request({
          method: 'PATCH',
          url: `/api/admin/users/${id}`,
          payload: { name },
        });
        assert.equal(renamed.statusCode, 200, renamed.body);
      }
      await test.app.services.securityEvents.flush();

      const rows = await rowsAbout(test, email, start);
      assert.deepEqual(tally(rows), {
        own: {
          'signed-in-new-device': ownSignIns,
          'session-ended': ownSignIns - SESSIONS_PER_ACCOUNT_MAX,
          'sign-in-failed': 1,
          'account-renamed': 1,
        },
        summaries: {
          'signed-in-new-device password -': signIns - ownSignIns,
          'session-ended session-limit -': ended - (ownSignIns - SESSIONS_PER_ACCOUNT_MAX),
          'sign-in-failed password -': 1,
          [`account-renamed admin ${adminAccount.id}`]: 1,
        },
      });
      assert.equal(
        ownRows(rows),
        EVENTS_PER_WINDOW + 2,
        'the cap, and the first of the two kinds that came after it',
      );
      const signInSummary = rows.find((row) => row.type === 'signed-in-new-device' && row.repeats !== null)!;
      // Sign-in 76 is the first folded: it came from the first address, then the second and third.
      assert.deepEqual(signInSummary.addresses, ADDRESSES);
      assert.equal(signInSummary.more_addresses, false);

      // Both lists answer the summary rows, with their count, span and addresses.
      const firstFolded = new Date(start + ownSignIns * 1000).toISOString();
      const expected = {
        type: 'signed-in-new-device',
        control: 'password',
        email,
        address: ADDRESSES[0],
        actorId: null,
        at: firstFolded,
        count: signIns - ownSignIns,
        lastAt: new Date(lastSignIn).toISOString(),
        addresses: ADDRESSES,
        moreAddresses: false,
      };
      const own = (await last!.get('/api/auth/security-events')).json<{ events: EventJson[] }>().events;
      const ownSummary = own.find(
        (event) => event.type === 'signed-in-new-device' && event.count !== undefined,
      );
      assert.deepEqual(
        { ...ownSummary, id: 0, instance: undefined },
        { ...expected, id: 0, instance: undefined },
      );
      const plain = own.find((event) => event.count === undefined)!;
      assert.deepEqual(
        Object.keys(plain).sort(),
        ['actorId', 'address', 'at', 'control', 'email', 'id', 'instance', 'type'],
        'an event of its own has no summary fields',
      );
      // An admin's repeated change, summarised, still names the admin; its owner sees no address of it.
      assert.deepEqual(
        own
          .filter((event) => event.type === 'account-renamed')
          .map(({ count, actorId, address, addresses }) => ({ count, actorId, address, addresses })),
        [
          { count: 1, actorId: adminAccount.id, address: null, addresses: [] },
          { count: undefined, actorId: adminAccount.id, address: null, addresses: undefined },
        ],
      );
      const listed = (await admin.get('/api/admin/security-events?limit=200')).json<{ events: EventJson[] }>()
        .events;
      const adminSummary = listed.find(
        (event) => event.email === email && event.type === 'signed-in-new-device',
      );
      assert.deepEqual(
        { ...adminSummary, id: 0, instance: undefined },
        { ...expected, id: 0, instance: undefined },
      );
      assert.equal(
        listed.filter((event) => event.email === email && event.count !== undefined).length,
        4,
        'one summary per kind, control and actor',
      );

      // The next window stores again, and the last one's summary stays as it was.
      test.clock.set(start + EVENT_WINDOW_MS);
      await signedIn(test, email);
      await test.app.services.securityEvents.flush();
      assert.deepEqual(tally(await rowsAbout(test, email, start + EVENT_WINDOW_MS)), {
        own: { 'signed-in-new-device': 1, 'session-ended': 1 },
        summaries: {},
      });
      assert.deepEqual(tally(await rowsAbout(test, email, start)), tally(rows));
    });

    it(`keeps the first ${SUMMARY_ADDRESSES} distinct addresses of a summary, and a window is ${EVENT_WINDOW_MS / 60_000} minutes of the clock`, async () => {
      const { db } = await testDatabase(kind);
      const repository = new SecurityEventsRepository(db);
      const email = `cap-${kind}-addresses@example.com`;
      const start = windowStartOf(Date.UTC(2026, 0, 1, 12));
      const event = (at: number, address: string): NewSecurityEvent => ({
        at,
        type: 'signed-in',
        control: 'password',
        email,
        address,
        instance: 'test-1',
        actorId: null,
      });
      // The cap's worth, then repeats from 8 addresses (the second seen twice), all in one window.
      await repository.insert(
        Array.from({ length: EVENTS_PER_WINDOW }, (_, n) => event(start + n, '192.0.2.1')),
      );
      const repeats = [
        '192.0.2.10',
        '192.0.2.11',
        '192.0.2.11',
        ...Array.from({ length: 6 }, (_, n) => `192.0.2.${20 + n}`),
      ];
      await repository.insert(
        repeats.map((address, n) => event(start + EVENT_WINDOW_MS - 10 + n / 10, address)),
      );
      // A millisecond after the window: a new one.
      await repository.insert([event(start + EVENT_WINDOW_MS, '192.0.2.99')]);
      const first = await db.query<Row>(
        'SELECT type, control, actor_id, repeats, addresses, more_addresses FROM security_events WHERE email = $1 AND repeats IS NOT NULL',
        [email],
      );
      assert.deepEqual(first, [
        {
          type: 'signed-in',
          control: 'password',
          actor_id: null,
          repeats: repeats.length,
          addresses: ['192.0.2.10', '192.0.2.11', '192.0.2.20', '192.0.2.21', '192.0.2.22'].slice(
            0,
            SUMMARY_ADDRESSES,
          ),
          more_addresses: true,
        },
      ]);
      assert.equal(SUMMARY_ADDRESSES, 5);
      const [own] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM security_events WHERE email = $1 AND repeats IS NULL',
        [email],
      );
      assert.equal(own!.n, EVENTS_PER_WINDOW + 1);
    });

    it('purges the windows of the cap a day after they start, with the expired events', async (t) => {
      const test = await testAppFor(t, { database: kind });
      const { securityEvents } = test.app.services;
      const email = `cap-${kind}-purge@example.com`;
      const windows = async () =>
        (
          await test.database.db.query<{ start: Date | string }>(
            'SELECT window_start AS start FROM security_event_windows WHERE email = $1 ORDER BY window_start',
            [email],
          )
        ).map((row) => new Date(row.start).getTime());
      const now = test.clock.now();
      test.clock.set(now - EVENT_WINDOWS_KEPT_MS - EVENT_WINDOW_MS);
      securityEvents.record({ type: 'sign-in-failed', control: 'password', email });
      test.clock.set(now);
      securityEvents.record({ type: 'sign-in-failed', control: 'password', email });
      await securityEvents.flush();
      assert.equal((await windows()).length, 2);
      await securityEvents.purgeExpired();
      assert.deepEqual(await windows(), [windowStartOf(now)]);
    });
  });
}

describe('the cap under concurrency (postgres)', { skip: skipPostgres }, () => {
  /** `count` more instances on the PostgreSQL database of `test`, on its clock. */
  async function moreInstances(t: TestContext, test: TestApp, count: number): Promise<FastifyInstance[]> {
    const apps: FastifyInstance[] = [];
    for (let n = 0; n < count; n++) {
      const app = await buildApp(testConfig({ ...ENV, DATABASE_URL: test.database.url! }), {
        clock: test.clock,
      });
      t.after(() => app.close());
      await app.ready();
      apps.push(app);
    }
    return apps;
  }

  it('stores exactly 100 rows and counts every other event when sign-ins of one account run at once on three instances', async (t) => {
    const test = await testAppFor(t, { database: 'postgres', env: ENV });
    const start = windowStartOf(test.clock.now()) + EVENT_WINDOW_MS;
    test.clock.set(start);
    const { email, id } = await freshAccount(test);
    const apps = [test.app, ...(await moreInstances(t, test, 2))];
    // Waves of 15 at once, 5 an instance (as many of one account's attempts as an instance's gate
    // takes at once, docs/rules.md#the-login-gate): each wave's sign-ins race for the window's row.
    // Some are refused while the account's budget is reserved by the others (429): only those
    // answered 200 wrote their events.
    const answers: number[] = [];
    for (let wave = 0; wave < 12; wave++) {
      const statuses = await Promise.all(
        Array.from({ length: 15 }, async (_, n) => {
          const browser = new TestClient(apps[n % apps.length]!, `198.18.${wave}.${n}`);
          return (await browser.login(email, OWN_PASSWORD)).statusCode;
        }),
      );
      answers.push(...statuses);
    }
    const signedInCount = answers.filter((status) => status === 200).length;
    t.diagnostic(
      `${signedInCount} of ${answers.length} signed in; the others: ${answers.filter((s) => s !== 200).join(' ')}`,
    );
    assert.ok(signedInCount > EVENTS_PER_WINDOW, 'enough sign-ins to pass the cap');
    // Every session a sign-in ended is one event: those the account no longer has.
    const [{ n: sessions } = { n: 0 }] = await test.database.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sessions WHERE user_id = $1',
      [id],
    );
    const ended = signedInCount - sessions;
    const rows = await rowsAbout(test, email, start);
    const { own, summaries } = tally(rows);
    assert.equal(ownRows(rows), EVENTS_PER_WINDOW, 'no two sign-ins both took the 100th row');
    assert.equal(
      (own['signed-in-new-device'] ?? 0) + (summaries['signed-in-new-device password -'] ?? 0),
      signedInCount,
    );
    assert.equal((own['session-ended'] ?? 0) + (summaries['session-ended session-limit -'] ?? 0), ended);
  });

  it('stores exactly 100 rows and one summary of 200 when 300 events about one account are written at once on many connections', async () => {
    const { db } = await testDatabase('postgres');
    const repository = new SecurityEventsRepository(db);
    const email = 'cap-concurrent@example.com';
    const start = windowStartOf(Date.UTC(2026, 0, 2));
    await Promise.all(
      Array.from({ length: 300 }, (_, n) =>
        repository.insert([
          {
            at: start + n,
            type: 'signed-in',
            control: 'password',
            email,
            address: '192.0.2.1',
            instance: 'test-1',
            actorId: null,
          },
        ]),
      ),
    );
    assert.deepEqual(tally(await rowsAbout({ database: await testDatabase('postgres') }, email, start)), {
      own: { 'signed-in': EVENTS_PER_WINDOW },
      summaries: { 'signed-in password -': 300 - EVENTS_PER_WINDOW },
    });
  });
});
