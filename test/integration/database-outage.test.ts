// PostgreSQL slow or gone (docs/rules.md#faults): 503, nothing half-written, back by itself.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { ApiClient, ApiError, MemoryCookieJar } from '../../src/client/index.ts';
import { ManualClock } from '../../src/clock.ts';
import { DatabaseUnavailableError } from '../../src/db/availability.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { TestClient, testConfig } from '../helpers/app.ts';
import { closeTestDatabases, testDatabase } from '../helpers/database.ts';
import { skipUnless } from '../helpers/services.ts';

const skip = await skipUnless('postgres');
after(closeTestDatabases);

const STATEMENT_TIMEOUT_MS = 300;
const BOB_ID = 2;

/**
 * The app on this file's schema through a pool of its own, with a short statement timeout and an
 * application name that lets the test find (and end) that pool's connections alone.
 */
async function appWithShortTimeout(t: TestContext, statementTimeoutMs = STATEMENT_TIMEOUT_MS) {
  const database = await testDatabase('postgres');
  await database.reset();
  const url = new URL(database.url!);
  const applicationName = `tp-outage-${process.pid}-${Math.random().toString(36).slice(2)}`;
  url.searchParams.set('application_name', applicationName);
  const db = await openDatabase({
    databaseUrl: url.toString(),
    dataDir: '',
    databaseStatementTimeoutMs: statementTimeoutMs,
  });
  const clock = new ManualClock();
  const app = await buildApp(testConfig(), { clock, database: db });
  t.after(async () => {
    await app.close();
    await db.close();
  });
  await app.ready();
  // Another session on the same schema: it holds the locks that stall the app's statements.
  const admin = new pg.Client({ connectionString: database.url! });
  await admin.connect();
  t.after(() => admin.end());
  return { app, db, admin, clock, applicationName, url: database.url! };
}

/** The outage edges the app's database reports from now on, with the code of the error that started each. */
function observeOutages(db: Database) {
  const edges: { event: 'started' | 'ended'; cause?: string }[] = [];
  db.availability.observe({
    outageStarted: (error) => edges.push({ event: 'started', cause: (error as { code?: string }).code }),
    outageEnded: () => edges.push({ event: 'ended' }),
  });
  return edges;
}

describe('the database away', { skip }, () => {
  it('answers 503 with Retry-After past DATABASE_STATEMENT_TIMEOUT, writes nothing, and serves again once it answers', async (t) => {
    const { app, admin } = await appWithShortTimeout(t);
    const alice = new TestClient(app, '198.51.100.7');
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const [before] = (await admin.query('SELECT assignee_id FROM tasks WHERE id = 1')).rows;

    await admin.query('BEGIN');
    await admin.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
    const read = await alice.get('/api/employee/tasks');
    assert.equal(read.statusCode, 503);
    assert.deepEqual(read.json(), {
      code: 'DATABASE_UNAVAILABLE',
      message: 'The database cannot be reached right now. Try again shortly.',
      retryAfter: 1,
    });
    assert.equal(read.headers['retry-after'], '1');
    assert.equal(read.headers['cache-control'], 'no-store');
    const bulk = await alice.request({
      method: 'PATCH',
      url: '/api/employee/tasks/bulk',
      payload: { taskIds: [1, 2], assigneeId: BOB_ID },
    });
    assert.equal(bulk.statusCode, 503);
    assert.equal(bulk.json().code, 'DATABASE_UNAVAILABLE');
    await admin.query('ROLLBACK');

    const [after] = (await admin.query('SELECT assignee_id FROM tasks WHERE id = 1')).rows;
    assert.deepEqual(after, before, 'the refused bulk wrote nothing');
    assert.equal((await alice.get('/api/employee/tasks')).statusCode, 200);
    assert.equal(app.databaseOutage.refusedTotal, 2);
  });

  it('takes statements past the timeout for no outage: answered 503, none logged', async (t) => {
    const { app, db, admin } = await appWithShortTimeout(t);
    const outages = observeOutages(db);
    const alice = new TestClient(app, '198.51.100.9');
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
    for (let i = 0; i < 3; i++) assert.equal((await alice.get('/api/employee/tasks')).statusCode, 503);
    await admin.query('ROLLBACK');
    assert.equal(app.databaseOutage.refusedTotal, 3);
    assert.deepEqual(
      outages.filter((edge) => edge.cause === '57014'),
      [],
      'the database answered: it cancelled the statements',
    );
  });

  it('takes a connection that ends under a waiting statement for an outage, logged once', async (t) => {
    // A timeout long enough for the test to find the waiting statement and end its connection.
    const { app, db, admin, applicationName } = await appWithShortTimeout(t, 20_000);
    const outages = observeOutages(db);
    const alice = new TestClient(app, '198.51.100.10');
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
    const waiting = alice.get('/api/employee/tasks');
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { rows } = await admin.query(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
          WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [applicationName],
      );
      if (rows.length > 0) break;
      assert.ok(Date.now() < deadline, 'the statement never waited on the lock');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal((await waiting).statusCode, 503);
    assert.deepEqual(
      outages.map((edge) => edge.event),
      ['started'],
    );
    assert.equal(app.databaseOutage.up, false);
    await admin.query('ROLLBACK');
    assert.equal((await alice.get('/api/employee/tasks')).statusCode, 200);
    // Answered by an older connection, which cannot end an outage that ended sessions: a fresh
    // connection is tried at once and ends it.
    const until = Date.now() + 5_000;
    while (!app.databaseOutage.up && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(app.databaseOutage.up, true);
    assert.deepEqual(
      outages.map((edge) => edge.event),
      ['started', 'ended'],
    );
  });

  it('rides through the end of every pooled connection (a restart) without a failed request', async (t) => {
    const { app, admin, applicationName } = await appWithShortTimeout(t);
    const alice = new TestClient(app, '198.51.100.8');
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    await Promise.all([alice.get('/api/employee/tasks'), alice.get('/api/employee/tasks/1')]);
    const { rows } = await admin.query(
      'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    assert.ok(rows.length > 0, 'the pool had connections to end');
    // The idle connections learn of their end asynchronously; the pool drops them and opens new ones.
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const url of ['/api/employee/tasks', '/api/employee/tasks/1', '/api/auth/me'])
      assert.equal((await alice.get(url)).statusCode, 200, url);
  });

  it('survives a connection that ends between two statements of a transaction: the next one fails, 503', async (t) => {
    const { app, db, admin, applicationName } = await appWithShortTimeout(t);
    const ended = db.transaction(async (connection) => {
      await connection.query('SELECT 1');
      // A server shutting down ends the session while no statement of it runs: the client hears of
      // it as an 'error' event, which must not end the process.
      const { rows } = await admin.query(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
          WHERE application_name = $1 AND state = 'idle in transaction'`,
        [applicationName],
      );
      assert.equal(rows.length, 1, 'the transaction’s session was ended');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await connection.query('SELECT 2');
    });
    await assert.rejects(ended, DatabaseUnavailableError);
    const alice = new TestClient(app, '198.51.100.11');
    assert.equal((await alice.login('alice@example.com')).statusCode, 200, 'the pool serves again');
  });

  it('the typed client waits Retry-After and sends a keyed bulk reassignment again, never one without a key', async (t) => {
    const { app, admin } = await appWithShortTimeout(t);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const waits: number[] = [];
    const client = new ApiClient({
      baseUrl: `http://127.0.0.1:${port}`,
      cookieJar: new MemoryCookieJar(),
      // The wait is when the database comes back: the lock goes, and the retry finds it.
      sleep: async (ms) => {
        waits.push(ms);
        await admin.query('ROLLBACK');
      },
    });
    await client.login('alice@example.com', 'demo-password');
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
    const page = await client.tasks({ limit: 5 });
    assert.equal(page.tasks.length, 5);
    assert.deepEqual(waits, [1000]);

    // Under its Idempotency-Key a reassignment answered 503 is sent again: applied once.
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
    const outcome = await client.bulkReassign([1], BOB_ID);
    assert.deepEqual([outcome.succeeded, outcome.replayed], [1, false]);
    assert.deepEqual(waits, [1000, 1000]);

    await admin.query('BEGIN');
    await admin.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
    const refused = await client
      .bulkReassign([1], BOB_ID, { idempotencyKey: null })
      .catch((error: unknown) => error);
    assert.ok(refused instanceof ApiError);
    assert.equal(refused.code, 'DATABASE_UNAVAILABLE');
    assert.equal(refused.retryAfter, 1);
    assert.deepEqual(waits, [1000, 1000], 'without a key: no wait, no retry');
    await admin.query('ROLLBACK');
  });
});
