// A keyed bulk reassignment across a SIGKILL: replayed if committed, else nothing was applied.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ApiClient, ApiError, MemoryCookieJar } from '../../src/client/index.ts';
import { DEMO_PASSWORD } from '../../src/db/seed.ts';
import { privateTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { uniquePrefix } from '../helpers/redis.ts';
import { listeningUrl, type ServerProcess, startServer } from '../helpers/server-process.ts';
import { REDIS_URL, skipUnless } from '../helpers/services.ts';

const skip = (await skipUnless('postgres')) || (await skipUnless('redis'));
const SESSION_SECRET = randomBytes(32).toString('base64url');
const HELD = 'idempotency test hook: answer held after commit';
/** Each database's processes share one budget (one key prefix), as a fleet does. */
const prefixes = new Map<TestDatabase, string>();

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** The service on `database`, as a process of its own (the test hook on when asked). */
async function serve(database: TestDatabase, env: Record<string, string> = {}) {
  const server = startServer({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url!,
    // One budget for both processes, as a fleet shares it.
    REDIS_URL,
    REDIS_KEY_PREFIX: prefixes.get(database) ?? prefixes.set(database, uniquePrefix()).get(database)!,
    SESSION_SECRET,
    // Long enough for a statement to wait on a row another connection holds (the second case).
    DATABASE_STATEMENT_TIMEOUT: '60s',
    ...env,
  });
  cleanups.push(() => kill(server));
  return { server, url: await listeningUrl(server.output, server.exited) };
}

async function kill(server: ServerProcess): Promise<void> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await server.exited;
}

/** Resolves when `server` has printed `text` (real time: another process). */
async function printed(server: ServerProcess, text: string): Promise<void> {
  for (let waited = 0; !server.output().includes(text); waited += 50) {
    if (waited > 30_000) throw new Error(`"${text}" never came:\n${server.output().slice(-3000)}`);
    await sleep(50);
  }
}

/** A signed-in typed client of `url` that sends nothing twice by itself: the test retries. */
async function signedIn(url: string, jar = new MemoryCookieJar()): Promise<ApiClient> {
  const client = new ApiClient({ baseUrl: url, cookieJar: jar, retry: false });
  if (jar.header() === null) await client.login('alice@example.com', DEMO_PASSWORD);
  else await client.csrf();
  return client;
}

const tasksOf = async (database: TestDatabase, ids: readonly number[]) =>
  database.db.query<{ id: number; assignee_id: number; updated_at: string }>(
    'SELECT id, assignee_id, updated_at::text AS updated_at FROM tasks WHERE id = ANY($1) ORDER BY id',
    [ids],
  );

describe('a keyed bulk reassignment and a SIGKILL', { skip }, () => {
  it('killed between its commit and its answer, is replayed to the retry on a new process, applied once', async () => {
    const database = await privateTestDatabase('postgres');
    cleanups.push(() => database.close());
    const first = await serve(database, { TEST_HOLD_COMMITTED_ANSWERS: 'true' });
    const jar = new MemoryCookieJar();
    const alice = await signedIn(first.url, jar);
    const key = randomUUID();
    const taskIds = [31, 32, 33];

    const lost = alice.bulkReassign(taskIds, 3, { idempotencyKey: key }).then(
      () => assert.fail('the held answer never comes'),
      (error: unknown) => error,
    );
    await printed(first.server, HELD);
    await kill(first.server);
    const error = await lost;
    assert.ok(error instanceof ApiError && error.code === 'NETWORK_ERROR', String(error));
    const committed = await tasksOf(database, taskIds);
    assert.ok(
      committed.every((task) => task.assignee_id === 3),
      'the transaction had committed',
    );

    const second = await serve(database);
    const retry = await (await signedIn(second.url, jar)).bulkReassign(taskIds, 3, { idempotencyKey: key });
    assert.equal(retry.replayed, true, 'Idempotent-Replayed: true');
    assert.deepEqual(
      { succeeded: retry.succeeded, failed: retry.failed, results: retry.results },
      { succeeded: 3, failed: 0, results: taskIds.map((taskId) => ({ taskId, status: 'reassigned' })) },
    );
    assert.deepEqual(await tasksOf(database, taskIds), committed, 'not applied a second time');
    assert.equal(retry.rateLimit?.remaining, 29, 'the key was charged once, by the killed process');
  });

  it('killed before its commit, has applied nothing; its mark blocks the key until older than the request timeout', async () => {
    const database = await privateTestDatabase('postgres');
    cleanups.push(() => database.close());
    const first = await serve(database);
    const jar = new MemoryCookieJar();
    const alice = await signedIn(first.url, jar);
    const key = randomUUID();
    const taskIds = [41, 42];
    const before = await tasksOf(database, taskIds);

    // Another connection holds task 42's row: the reassignment's statement waits on it, in its transaction.
    const holder = new pg.Client({ connectionString: database.url! });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM tasks WHERE id = 42 FOR UPDATE');
    const lost = alice.bulkReassign(taskIds, 2, { idempotencyKey: key }).catch((error: unknown) => error);
    for (let waited = 0; ; waited += 50) {
      const [{ waiting }] = await database.db.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE tasks%'`,
      );
      if (waiting! > 0) break;
      if (waited > 30_000) throw new Error('the reassignment never reached its statement');
      await sleep(50);
    }
    await kill(first.server);
    assert.ok((await lost) instanceof ApiError);
    await holder.query('ROLLBACK');
    assert.deepEqual(await tasksOf(database, taskIds), before, 'nothing was applied');
    const marks = await database.db.query<{ response: string | null }>(
      'SELECT response FROM idempotency_keys WHERE key = $1',
      [key],
    );
    assert.deepEqual(marks, [{ response: null }], 'the in-flight mark the claim committed is left');

    const second = await serve(database);
    const again = await signedIn(second.url, jar);
    const busy = await again.bulkReassign(taskIds, 2, { idempotencyKey: key }).then(
      () => assert.fail('the fresh mark blocks'),
      (error: unknown) => error as ApiError,
    );
    assert.deepEqual([busy.status, busy.code, busy.retryAfter], [409, 'IDEMPOTENCY_KEY_IN_FLIGHT', 1]);
    // The request timeout passes (moved in the row rather than waited for): the key is free again.
    await database.db.query(
      "UPDATE idempotency_keys SET claimed_at = claimed_at - interval '30 seconds' WHERE key = $1",
      [key],
    );
    const applied = await again.bulkReassign(taskIds, 2, { idempotencyKey: key });
    assert.equal(applied.replayed, false);
    assert.equal(applied.succeeded, 2);
    assert.ok((await tasksOf(database, taskIds)).every((task) => task.assignee_id === 2));
  });
});
