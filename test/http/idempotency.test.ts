// Bulk reassignment with an Idempotency-Key (docs/rules.md#idempotent-bulk-reassignment).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it, type TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import {
  IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
  IdempotencyKeysRepository,
} from '../../src/db/repositories/idempotency-keys.ts';
import { fingerprint } from '../../src/http/plugins/idempotency.ts';
import { REQUEST_TIMEOUT_MS } from '../../src/limits.ts';
import { createTestApp, type Response, type TestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind, recordWrites, testDatabase } from '../helpers/database.ts';
import { assertError, taskSnapshot } from '../helpers/http.ts';
import { assertRefused, rateLimitHeaders } from '../helpers/rate-limit-headers.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const BULK_URL = '/api/employee/tasks/bulk';
/** The route a key of a bulk reassignment is claimed on. */
const BULK_ROUTE = `PATCH ${BULK_URL}`;
const HOUR_MS = 3_600_000;
const skipPostgres = await skipUnless('postgres');

/** A bulk reassignment, with `key` as its Idempotency-Key unless null. */
const bulk = (
  client: TestClient,
  key: string | null,
  payload: unknown,
  headers: Record<string, string> = {},
) =>
  client.request({
    method: 'PATCH',
    url: BULK_URL,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    headers: {
      'content-type': 'application/json',
      ...(key === null ? {} : { 'idempotency-key': key }),
      ...headers,
    },
  });

const remaining = (response: Response) => rateLimitHeaders(response).remaining;
/** The free repeats of a key (docs/rules.md#idempotent-bulk-reassignment). */
const FREE_REPEATS = 10;
const replayed = (response: Response) => response.headers['idempotent-replayed'] === 'true';

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  /** An app on this database (with `env`), and alice signed in. */
  const signedIn = async (
    t: TestContext,
    env: Record<string, string> = {},
  ): Promise<TestApp & { alice: TestClient }> => {
    const testApp = await createTestApp({ database: kind, env });
    t.after(testApp.close);
    await testApp.database.db.query('DELETE FROM idempotency_keys');
    const alice = testApp.client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    return { ...testApp, alice };
  };
  const keyRows = async ({ database }: TestApp) =>
    database.db.query<{ key: string; response: string | null }>(
      'SELECT key, response FROM idempotency_keys ORDER BY key',
    );

  describe(`PATCH ${BULK_URL} with an Idempotency-Key (${kind})`, {
    skip: kind === 'postgres' && skipPostgres,
  }, () => {
    it('replays the stored answer for the same body: Idempotent-Replayed, no task changed, no budget spent', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '3/15m' });
      const { alice } = testApp;
      const key = randomUUID();
      const first = await bulk(alice, key, { taskIds: [5, 9999, 5], assigneeId: 3 });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is no replay');
      assert.equal(remaining(first), 2);
      const changed = await taskSnapshot(testApp);
      testApp.clock.advance(60_000);

      for (let i = 0; i < 3; i++) {
        const again = await bulk(alice, key, { taskIds: [5, 9999, 5], assigneeId: 3 });
        assert.equal(again.statusCode, 200);
        assert.ok(replayed(again), 'Idempotent-Replayed: true');
        assert.deepEqual(again.json(), first.json());
        assert.equal(remaining(again), 2, 'a replay spends nothing, and its headers show the budget');
      }
      assert.deepEqual(await taskSnapshot(testApp), changed, 'no task was touched again (updated_at too)');
      // The budget really is untouched: two more reassignments are admitted, the third is not.
      for (const expected of [200, 200, 429])
        assert.equal((await bulk(alice, null, { taskIds: [6], assigneeId: 2 })).statusCode, expected);
    });

    it('replays even when the bulk budget is spent, showing the budget as it is', async (t) => {
      const { alice } = await signedIn(t, { RATE_LIMIT_BULK: '2/15m' });
      const key = randomUUID();
      const first = await bulk(alice, key, { taskIds: [1, 2], assigneeId: 2 });
      assert.equal(first.statusCode, 200);
      assert.equal((await bulk(alice, null, { taskIds: [3], assigneeId: 2 })).statusCode, 200);
      assertRefused(
        await bulk(alice, null, { taskIds: [4], assigneeId: 2 }),
        'TASK_BULK_RATE_LIMIT',
        'task-bulk',
      );

      const again = await bulk(alice, key, { taskIds: [1, 2], assigneeId: 2 });
      assert.equal(again.statusCode, 200);
      assert.ok(replayed(again));
      assert.deepEqual(again.json(), first.json());
      const headers = rateLimitHeaders(again);
      assert.equal(headers.remaining, 0);
      assert.ok(headers.reset >= 1, 'RateLimit-Reset says when the spent budget admits again');
      assert.equal(again.headers['retry-after'], undefined, 'a 200 asks no wait');
      // A new key is a new reassignment: refused like any other.
      assertRefused(
        await bulk(alice, randomUUID(), { taskIds: [1, 2], assigneeId: 2 }),
        'TASK_BULK_RATE_LIMIT',
        'task-bulk',
      );
    });

    it('spares ten repeats of a key; from the eleventh a repeat spends a unit, and is refused 429 once none is left', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '3/15m' });
      const { alice, clock } = testApp;
      const key = randomUUID();
      const payload = { taskIds: [5, 6], assigneeId: 3 };
      const first = await bulk(alice, key, payload);
      assert.equal(first.statusCode, 200);
      assert.equal(remaining(first), 2);
      // Any repeat counts: a replay, and another body under the key (422), alike.
      for (let i = 1; i <= FREE_REPEATS; i++) {
        const again = await bulk(alice, key, i === 5 ? { taskIds: [5], assigneeId: 3 } : payload);
        assert.equal(again.statusCode, i === 5 ? 422 : 200, `repeat ${i}`);
        assert.equal(remaining(again), 2, `repeat ${i} is free`);
      }
      const [row] = await testApp.database.db.query<{ free_repeats: number }>(
        'SELECT free_repeats FROM idempotency_keys WHERE key = $1',
        [key],
      );
      assert.equal(row?.free_repeats, FREE_REPEATS, 'counted with the key, where every instance sees it');

      for (const left of [1, 0]) {
        const charged = await bulk(alice, key, payload);
        assert.equal(charged.statusCode, 200);
        assert.ok(replayed(charged), 'still the stored answer');
        assert.deepEqual(charged.json(), first.json());
        assert.equal(remaining(charged), left, 'a repeat past ten spends as a new request');
      }
      const writes = await recordWrites(testApp.database.db);
      t.after(writes.stop);
      assertRefused(await bulk(alice, key, payload), 'TASK_BULK_RATE_LIMIT', 'task-bulk');
      assertRefused(
        await bulk(alice, key, { taskIds: [1], assigneeId: 3 }),
        'TASK_BULK_RATE_LIMIT',
        'task-bulk',
      );
      assert.deepEqual(await writes.writes(), [], 'a refused repeat writes nothing');
      // Once the window has room again, a repeat is admitted (and charged) as any request is.
      clock.advance(15 * 60_000);
      const later = await bulk(alice, key, payload);
      assert.ok(replayed(later));
      assert.equal(remaining(later), 2);
      // (The session's last-seen time is written at most once a minute, whatever the answer.)
      assert.deepEqual(
        (await writes.writes()).filter((write) => !write.startsWith('sessions:')),
        [],
        'a repeat past ten writes nothing of its key',
      );
    });

    it('counts the repeats of a key in flight too: ten 409s are free, the eleventh spends', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '1/15m' });
      const { alice, clock, database } = testApp;
      const key = randomUUID();
      const [{ id }] = await database.db.query<{ id: number }>(
        "SELECT id FROM users WHERE email = 'alice@example.com'",
      );
      const now = clock.now();
      await new IdempotencyKeysRepository(database.db).claim({
        userId: id!,
        key,
        claim: randomUUID(),
        route: BULK_ROUTE,
        nowMs: now,
        staleBeforeMs: now - REQUEST_TIMEOUT_MS,
        expiresAtMs: now + 24 * HOUR_MS,
      });
      for (let i = 1; i <= FREE_REPEATS; i++) {
        const busy = await bulk(alice, key, { taskIds: [1], assigneeId: 2 });
        assertError(busy, 409, 'IDEMPOTENCY_KEY_IN_FLIGHT');
        assert.equal(remaining(busy), 1, `repeat ${i} is free`);
      }
      const charged = await bulk(alice, key, { taskIds: [1], assigneeId: 2 });
      assertError(charged, 409, 'IDEMPOTENCY_KEY_IN_FLIGHT');
      assert.equal(remaining(charged), 0);
      assertRefused(
        await bulk(alice, key, { taskIds: [1], assigneeId: 2 }),
        'TASK_BULK_RATE_LIMIT',
        'task-bulk',
      );
    });

    it('spares exactly ten repeats of a key when the last free ones are raced for', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '30/15m' });
      const { alice } = testApp;
      const key = randomUUID();
      const payload = { taskIds: [31, 32], assigneeId: 2 };
      assert.equal((await bulk(alice, key, payload)).statusCode, 200);
      for (let i = 0; i < FREE_REPEATS - 2; i++) assert.ok(replayed(await bulk(alice, key, payload)));
      const racing = await Promise.all(Array.from({ length: 8 }, () => bulk(alice, key, payload)));
      assert.ok(racing.every(replayed));
      const after = await bulk(alice, null, { taskIds: [33], assigneeId: 2 });
      assert.equal(remaining(after), 30 - 1 - 6 - 1, 'two of the eight were free, six were charged');
    });

    it('writes nothing for a request the limiter refuses, with a fresh key or without one, and the key stays free for a later try', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '1/15m' });
      const { alice, clock, database } = testApp;
      assert.equal((await bulk(alice, null, { taskIds: [1], assigneeId: 2 })).statusCode, 200);
      const writes = await recordWrites(database.db);
      t.after(writes.stop);
      const keys = Array.from({ length: 20 }, () => randomUUID());
      for (const key of keys)
        assertRefused(
          await bulk(alice, key, { taskIds: [1], assigneeId: 2 }),
          'TASK_BULK_RATE_LIMIT',
          'task-bulk',
        );
      for (let i = 0; i < 5; i++)
        assertRefused(
          await bulk(alice, null, { taskIds: [1], assigneeId: 2 }),
          'TASK_BULK_RATE_LIMIT',
          'task-bulk',
        );
      assert.deepEqual(await writes.writes(), [], 'no claim made and removed');
      assert.deepEqual(await keyRows(testApp), []);

      // A key refused by the limiter is no repeat: its retry once the budget has room is processed.
      clock.advance(15 * 60_000);
      const retry = await bulk(alice, keys[0]!, { taskIds: [1], assigneeId: 3 });
      assert.equal(retry.statusCode, 200);
      assert.ok(!replayed(retry));
      assert.equal(remaining(retry), 0);
    });

    it('claims a key only once its request has passed every check: a 400, 403 or 422 leaves no row behind, written or deleted', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '10/15m' });
      const { alice, database } = testApp;
      const writes = await recordWrites(database.db);
      t.after(writes.stop);
      const key = randomUUID();
      assertError(
        await bulk(alice, key, { taskIds: [1], assigneeId: 2 }, { 'x-csrf-token': 'wrong' }),
        403,
        'CSRF_INVALID',
      );
      assertError(await bulk(alice, key, { taskIds: [], assigneeId: 2 }), 400, 'VALIDATION_ERROR');
      assertError(await bulk(alice, key, '{"taskIds":'), 400, 'INVALID_JSON');
      assert.deepEqual(await writes.writes(), []);
      // The assignee is checked in the work's transaction: the claim comes first, and goes again.
      assertError(await bulk(alice, key, { taskIds: [1], assigneeId: 9999 }), 422, 'ASSIGNEE_NOT_FOUND');
      assert.deepEqual(await writes.writes(), ['idempotency_keys:INSERT', 'idempotency_keys:DELETE']);
    });

    it('fingerprints the parsed body: the same fields in another order or spacing replay', async (t) => {
      const { alice } = await signedIn(t);
      const key = randomUUID();
      const first = await bulk(alice, key, '{"taskIds":[7,8],"assigneeId":1}');
      assert.equal(first.statusCode, 200);
      const again = await bulk(alice, key, '{ "assigneeId": 1,\n  "taskIds": [7, 8] }');
      assert.ok(replayed(again));
      assert.equal(
        fingerprint({ a: 1, b: [2, { c: 3, d: 4 }] }),
        fingerprint({ b: [2, { d: 4, c: 3 }], a: 1 }),
      );
      assert.notEqual(fingerprint({ taskIds: [7, 8] }), fingerprint({ taskIds: [8, 7] }));
    });

    it('answers 422 IDEMPOTENCY_KEY_REUSED to another body under the key, changing nothing', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '5/15m' });
      const { alice } = testApp;
      const key = randomUUID();
      assert.equal((await bulk(alice, key, { taskIds: [1, 2], assigneeId: 2 })).statusCode, 200);
      const before = await taskSnapshot(testApp);
      for (const payload of [
        { taskIds: [1, 2], assigneeId: 3 },
        { taskIds: [2, 1], assigneeId: 2 },
        { taskIds: [1], assigneeId: 2 },
      ]) {
        const reused = await bulk(alice, key, payload);
        assertError(reused, 422, 'IDEMPOTENCY_KEY_REUSED');
        assert.equal(remaining(reused), 4, 'a request that cannot change anything spends nothing');
      }
      assert.deepEqual(await taskSnapshot(testApp), before);
    });

    it('keeps keys per caller: another user’s equal key is a request of its own', async (t) => {
      const testApp = await signedIn(t);
      const bob = testApp.client();
      assert.equal((await bob.login('bob@example.com')).statusCode, 200);
      const key = 'shared-key-1';
      const byAlice = await bulk(testApp.alice, key, { taskIds: [11], assigneeId: 2 });
      assert.equal(byAlice.statusCode, 200);
      const byBob = await bulk(bob, key, { taskIds: [11, 12], assigneeId: 3 });
      assert.equal(byBob.statusCode, 200);
      assert.ok(!replayed(byBob));
      assert.equal(byBob.json<{ succeeded: number }>().succeeded, 2);
      assert.equal(
        (await testApp.alice.get('/api/employee/tasks/11')).json<{ task: { assigneeId: number } }>().task
          .assigneeId,
        3,
      );
    });

    it('spares no repeat of a key claimed on another route: a create’s key sent to the bulk reassignment or the import spends their budgets', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '1/15m', RATE_LIMIT_TASK_IMPORT: '1/1h' });
      const { alice } = testApp;
      const key = randomUUID();
      // A create costs a unit of the generic budget, a thousand of which come every fifteen minutes.
      const created = await alice.request({
        method: 'POST',
        url: '/api/employee/tasks',
        payload: JSON.stringify({ clientId: 1, title: 'Minted key' }),
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
      });
      assert.equal(created.statusCode, 201);
      const before = await taskSnapshot(testApp);
      const reused = await bulk(alice, key, { taskIds: [1], assigneeId: 3 });
      assertError(reused, 422, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(remaining(reused), 0, 'charged as a new request');
      assertRefused(
        await bulk(alice, key, { taskIds: [1], assigneeId: 3 }),
        'TASK_BULK_RATE_LIMIT',
        'task-bulk',
      );
      const importWith = () =>
        alice.request({
          method: 'POST',
          url: '/api/employee/tasks/import',
          payload: 'client,title\nInitech,Imported\n',
          headers: { 'content-type': 'text/csv', 'idempotency-key': key },
        });
      const imported = await importWith();
      assertError(imported, 422, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(remaining(imported), 0, 'charged as a new request');
      assertRefused(await importWith(), 'TASK_IMPORT_RATE_LIMIT', 'task-import');
      assert.deepEqual(await taskSnapshot(testApp), before);
    });

    it('answers 400 IDEMPOTENCY_KEY_INVALID to a key that is empty, too long or not printable ASCII, charged like any 400', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '10/15m' });
      const before = await taskSnapshot(testApp);
      const invalid = ['', 'k'.repeat(256), 'tab\there', 'clé', 'line\u007f'];
      let left = 10;
      for (const key of invalid) {
        const response = await bulk(testApp.alice, key, { taskIds: [1], assigneeId: 2 });
        assertError(response, 400, 'IDEMPOTENCY_KEY_INVALID');
        assert.equal(remaining(response), --left, `${JSON.stringify(key)} spends the budget`);
      }
      assert.deepEqual(await taskSnapshot(testApp), before);
      assert.deepEqual(await keyRows(testApp), []);
      for (const key of ['k'.repeat(255), ' ~!"quoted" key~ ', '8e03978e-40d5-43e8-bc93-6894a57f9324'])
        assert.equal((await bulk(testApp.alice, key, { taskIds: [1], assigneeId: 2 })).statusCode, 200, key);
    });

    it('answers 409 IDEMPOTENCY_KEY_IN_FLIGHT with Retry-After: 1 while the key is held, until its mark is older than the request timeout', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '5/15m' });
      const { alice, clock, database } = testApp;
      const key = randomUUID();
      // Another instance's request holds the key: its mark is committed, its answer not yet.
      const [{ id }] = await database.db.query<{ id: number }>(
        "SELECT id FROM users WHERE email = 'alice@example.com'",
      );
      const keys = new IdempotencyKeysRepository(database.db);
      const now = clock.now();
      const held = await keys.claim({
        userId: id!,
        key,
        claim: randomUUID(),
        route: BULK_ROUTE,
        nowMs: now,
        staleBeforeMs: now - REQUEST_TIMEOUT_MS,
        expiresAtMs: now + 24 * HOUR_MS,
      });
      assert.deepEqual(held, { kind: 'claimed' });
      const before = await taskSnapshot(testApp);

      const busy = await bulk(alice, key, { taskIds: [1], assigneeId: 2 });
      const body = assertError(busy, 409, 'IDEMPOTENCY_KEY_IN_FLIGHT');
      assert.equal(busy.headers['retry-after'], '1');
      assert.equal(body.retryAfter, 1);
      assert.equal(remaining(busy), 5, 'a repeat in flight spends nothing');
      clock.advance(REQUEST_TIMEOUT_MS - 1);
      assertError(await bulk(alice, key, { taskIds: [1], assigneeId: 2 }), 409, 'IDEMPOTENCY_KEY_IN_FLIGHT');
      assert.deepEqual(await taskSnapshot(testApp), before);

      // Past the request timeout the holder cannot still be running (its process died): the key is free.
      clock.advance(1);
      const taken = await bulk(alice, key, { taskIds: [1], assigneeId: 2 });
      assert.equal(taken.statusCode, 200);
      assert.ok(!replayed(taken));
      assert.equal(remaining(taken), 4);
      assert.ok(replayed(await bulk(alice, key, { taskIds: [1], assigneeId: 2 })));
    });

    it('applies 20 copies sent at once exactly once, and charges the first and the copies past ten free repeats', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '30/15m' });
      const { alice } = testApp;
      const key = randomUUID();
      const payload = { taskIds: [21, 22, 23], assigneeId: 3 };
      const answers = await Promise.all(Array.from({ length: 20 }, () => bulk(alice, key, payload)));
      const applied = answers.filter((a) => a.statusCode === 200 && !replayed(a));
      assert.equal(applied.length, 1, 'one answer is the first request’s own');
      for (const answer of answers) {
        if (answer.statusCode === 409) assertError(answer, 409, 'IDEMPOTENCY_KEY_IN_FLIGHT');
        else {
          assert.equal(answer.statusCode, 200);
          assert.deepEqual(answer.json(), applied[0]!.json());
        }
      }
      const after = await bulk(alice, null, { taskIds: [24], assigneeId: 2 });
      // Copies that found the key free spent a unit, and got it back when they lost the claim.
      assert.equal(remaining(after), 30 - 1 - (19 - FREE_REPEATS) - 1, 'the first, nine repeats, this one');
    });

    it('stores no answer but a 200: a refused or failed request leaves the key free for the next try', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '10/15m' });
      const { alice } = testApp;
      const key = randomUUID();
      assertError(await bulk(alice, key, { taskIds: [1], assigneeId: 9999 }), 422, 'ASSIGNEE_NOT_FOUND');
      assertError(
        await bulk(alice, key, { taskIds: [1], assigneeId: 2 }, { 'x-csrf-token': 'wrong' }),
        403,
        'CSRF_INVALID',
      );
      assertError(await bulk(alice, key, { taskIds: [], assigneeId: 2 }), 400, 'VALIDATION_ERROR');
      assertError(await bulk(alice, key, '{"taskIds":'), 400, 'INVALID_JSON');
      assert.deepEqual(await keyRows(testApp), [], 'every mark was released before its answer left');
      const later = await bulk(alice, key, { taskIds: [1], assigneeId: 2 });
      assert.equal(later.statusCode, 200);
      assert.ok(!replayed(later), 'processed, not refused as reused');
      assert.equal(remaining(later), 5, 'every try was charged: only a repeat of a held key is free');
    });

    it('stores nothing for a request the limiter refuses, nor for one without a session', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '1/15m' });
      assert.equal((await bulk(testApp.alice, null, { taskIds: [1], assigneeId: 2 })).statusCode, 200);
      const key = randomUUID();
      assertRefused(
        await bulk(testApp.alice, key, { taskIds: [1], assigneeId: 2 }),
        'TASK_BULK_RATE_LIMIT',
        'task-bulk',
      );
      const stranger = testApp.client();
      await stranger.fetchCsrf();
      assertError(await bulk(stranger, key, { taskIds: [1], assigneeId: 2 }), 401, 'UNAUTHENTICATED');
      assert.deepEqual(await keyRows(testApp), []);
    });

    it('changes nothing without the header: every request applies and spends, none is replayed', async (t) => {
      const testApp = await signedIn(t, { RATE_LIMIT_BULK: '3/15m' });
      const answers = [];
      for (let i = 0; i < 3; i++)
        answers.push(await bulk(testApp.alice, null, { taskIds: [1, 2], assigneeId: 2 }));
      assert.deepEqual(answers.map(remaining), [2, 1, 0]);
      assert.ok(answers.every((a) => a.statusCode === 200 && !replayed(a)));
      assert.deepEqual(await keyRows(testApp), []);
    });

    it('forgets an answer after IDEMPOTENCY_TTL: the key is then processed again', async (t) => {
      const testApp = await signedIn(t, { IDEMPOTENCY_TTL: '2h' });
      const { alice, clock } = testApp;
      const key = randomUUID();
      assert.equal((await bulk(alice, key, { taskIds: [3], assigneeId: 2 })).statusCode, 200);
      clock.advance(2 * HOUR_MS - 1);
      assert.ok(replayed(await bulk(alice, key, { taskIds: [3], assigneeId: 2 })));
      clock.advance(1);
      const anew = await bulk(alice, key, { taskIds: [3, 4], assigneeId: 1 });
      assert.equal(anew.statusCode, 200);
      assert.ok(!replayed(anew), 'an expired key is a new request, even with another body');
    });
  });
}

describe('the purge of expired idempotency keys', () => {
  it('deletes the expired keys at start and every ten minutes, in batches, off the request path', async (t) => {
    const database = await testDatabase('embedded');
    await database.db.query('DELETE FROM idempotency_keys');
    const clock = new ManualClock();
    const keys = new IdempotencyKeysRepository(database.db);
    const [{ id }] = await database.db.query<{ id: number }>(
      "SELECT id FROM users WHERE email = 'alice@example.com'",
    );
    const now = clock.now();
    const mark = (key: string, expiresAtMs: number) =>
      keys.claim({
        userId: id!,
        key,
        claim: randomUUID(),
        route: BULK_ROUTE,
        nowMs: now - HOUR_MS,
        staleBeforeMs: 0,
        expiresAtMs,
      });
    for (let i = 0; i < 7; i++) await mark(`expired-${i}`, now - 1);
    await mark('at-the-edge', now);
    await mark('within-ten-minutes', now + 5 * 60_000);
    await mark('tomorrow', now + 24 * HOUR_MS);
    assert.equal(await keys.deleteExpired(now, 3), 7, 'batches of 3 until none is left');
    for (let i = 0; i < 7; i++) await mark(`expired-${i}`, now - 1);

    const stored = async () =>
      (await database.db.query<{ key: string }>('SELECT key FROM idempotency_keys ORDER BY expires_at')).map(
        (row) => row.key,
      );
    const settle = async (expected: string[]) => {
      for (let turn = 0; turn < 500 && (await stored()).length !== expected.length; turn++)
        await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(await stored(), expected);
    };
    t.mock.timers.enable({ apis: ['setInterval'] });
    const app = await createTestApp({ clock });
    t.after(app.close);
    assert.equal(IDEMPOTENCY_KEY_PURGE_INTERVAL_MS, 10 * 60_000);
    await settle(['at-the-edge', 'within-ten-minutes', 'tomorrow']);
    clock.advance(IDEMPOTENCY_KEY_PURGE_INTERVAL_MS);
    t.mock.timers.tick(IDEMPOTENCY_KEY_PURGE_INTERVAL_MS);
    await settle(['tomorrow']);
  });
});
