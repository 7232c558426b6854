// Tasks a team runs (docs/rules.md#tasks): create, read with its ETag, edit under If-Match, history, on
// embedded and PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import type { Task } from '../../src/client/index.ts';
import { createTestApp, type Response, type TestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const skipPostgres = await skipUnless('postgres');
const TASKS = '/api/employee/tasks';
const BOB_ID = 2;
const ADMIN_ID = 4;

interface Entry {
  id: number;
  at: string;
  actor: { id: number; name: string } | null;
  source: string;
  changes: { field: string; from: unknown; to: unknown }[];
}

const send = (client: TestClient, method: 'POST' | 'PATCH', url: string, body: unknown, headers = {}) =>
  client.request({
    method,
    url,
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
const create = (client: TestClient, body: unknown, headers: Record<string, string> = {}) =>
  send(client, 'POST', TASKS, body, headers);
const edit = (client: TestClient, id: number, body: unknown, ifMatch?: string) =>
  send(client, 'PATCH', `${TASKS}/${id}`, body, ifMatch === undefined ? {} : { 'if-match': ifMatch });
const read = async (client: TestClient, id: number) => {
  const response = await client.get(`${TASKS}/${id}`);
  assert.equal(response.statusCode, 200);
  return { task: response.json<{ task: Task }>().task, etag: String(response.headers.etag) };
};
const history = async (client: TestClient, id: number, cursor?: string) => {
  const response = await client.get(`${TASKS}/${id}/history${cursor ? `?cursor=${cursor}` : ''}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json<{ entries: Entry[]; nextCursor: string | null }>();
};
const taskOf = (response: Response) => response.json<{ task: Task }>().task;

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  const signedIn = async (t: TestContext): Promise<TestApp & { alice: TestClient }> => {
    const testApp = await createTestApp({ database: kind });
    t.after(testApp.close);
    const alice = testApp.client();
    await alice.login('alice@example.com');
    return { ...testApp, alice };
  };

  describe(`tasks: create (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('creates with defaults: 201, Location, ETag, created by the caller, a create entry', async (t) => {
      const { alice, clock } = await signedIn(t);
      const response = await create(alice, { clientId: 2, title: '  Call the bank  ' });
      assert.equal(response.statusCode, 201, response.body);
      const task = taskOf(response);
      assert.equal(response.headers.location, `${TASKS}/${task.id}`);
      assert.equal(response.headers.etag, '"v1"');
      // The generic bucket counts it, as any other route (docs/rules.md#rate-limits).
      assert.match(String(response.headers['ratelimit-policy']), /^"api-authenticated";/);
      assert.deepEqual(
        { ...task, id: 0 },
        {
          id: 0,
          clientId: 2,
          title: 'Call the bank',
          description: '',
          status: 'open',
          priority: 'normal',
          dueDate: null,
          assigneeId: null,
          createdAt: new Date(clock.now()).toISOString(),
          createdBy: 1,
          updatedAt: new Date(clock.now()).toISOString(),
          version: 1,
        },
      );
      assert.deepEqual(await read(alice, task.id), { task, etag: '"v1"' });
      const { entries, nextCursor } = await history(alice, task.id);
      assert.equal(nextCursor, null);
      assert.equal(entries.length, 1);
      assert.deepEqual(entries[0]!.actor, { id: 1, name: 'Alice Martin' });
      assert.equal(entries[0]!.source, 'create');
      assert.deepEqual(entries[0]!.changes, [
        { field: 'clientId', from: null, to: 2 },
        { field: 'title', from: null, to: 'Call the bank' },
        { field: 'description', from: null, to: '' },
        { field: 'status', from: null, to: 'open' },
        { field: 'priority', from: null, to: 'normal' },
        { field: 'dueDate', from: null, to: null },
        { field: 'assigneeId', from: null, to: null },
      ]);
    });

    it('takes every writable field, and a leap day', async (t) => {
      const { alice } = await signedIn(t);
      const body = {
        clientId: 3,
        title: 'Quarterly report',
        description: 'Line one\nline two\t<b>not html</b>',
        status: 'in_progress',
        priority: 'urgent',
        dueDate: '2028-02-29',
        assigneeId: BOB_ID,
      };
      const response = await create(alice, body);
      assert.equal(response.statusCode, 201, response.body);
      const task = taskOf(response);
      for (const [field, value] of Object.entries(body))
        assert.equal(task[field as keyof Task], value, field);
    });

    const broken: [string, Record<string, unknown>][] = [
      ['clientId', { clientId: 'one', title: 'x' }],
      ['title', { clientId: 1, title: '   ' }],
      ['title', { clientId: 1, title: 'a'.repeat(201) }],
      ['title', { clientId: 1, title: 'bell\u0007' }],
      ['title', { clientId: 1, title: 'line\nbreak' }],
      ['description', { clientId: 1, title: 'x', description: 'd'.repeat(10_001) }],
      ['description', { clientId: 1, title: 'x', description: 'escape \u001b[31m' }],
      ['status', { clientId: 1, title: 'x', status: 'closed' }],
      ['priority', { clientId: 1, title: 'x', priority: 'HIGH' }],
      ['dueDate', { clientId: 1, title: 'x', dueDate: '2027-02-29' }],
      ['dueDate', { clientId: 1, title: 'x', dueDate: '2026-13-01' }],
      ['dueDate', { clientId: 1, title: 'x', dueDate: '0000-01-01' }],
      ['dueDate', { clientId: 1, title: 'x', dueDate: '2026-1-01' }],
      ['assigneeId', { clientId: 1, title: 'x', assigneeId: 0 }],
      ['version', { clientId: 1, title: 'x', version: 7 }],
    ];
    for (const [field, body] of broken)
      it(`answers 400 naming ${field} for ${JSON.stringify(body).slice(0, 60)}`, async (t) => {
        const { alice, database } = await signedIn(t);
        const error = assertError(await create(alice, body), 400, 'VALIDATION_ERROR');
        assert.match(JSON.stringify(error), new RegExp(field));
        const [{ count }] = (await database.db.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM tasks',
        )) as [{ count: number }];
        assert.equal(count, 200);
      });

    it('answers 400 naming the missing title, and a 200-character title once trimmed is taken', async (t) => {
      const { alice } = await signedIn(t);
      assert.match(
        JSON.stringify(assertError(await create(alice, { clientId: 1 }), 400, 'VALIDATION_ERROR')),
        /title/,
      );
      assert.equal((await create(alice, { clientId: 1, title: ` ${'é'.repeat(200)} ` })).statusCode, 201);
    });

    it('answers 422 CLIENT_NOT_FOUND and ASSIGNEE_NOT_FOUND (an admin, a disabled employee, nobody)', async (t) => {
      const { alice, database } = await signedIn(t);
      assertError(await create(alice, { clientId: 999, title: 'x' }), 422, 'CLIENT_NOT_FOUND');
      assertError(
        await create(alice, { clientId: 1, title: 'x', assigneeId: ADMIN_ID }),
        422,
        'ASSIGNEE_NOT_FOUND',
      );
      assertError(
        await create(alice, { clientId: 1, title: 'x', assigneeId: 999 }),
        422,
        'ASSIGNEE_NOT_FOUND',
      );
      await database.db.query('UPDATE users SET disabled_at = now() WHERE id = 3');
      assertError(await create(alice, { clientId: 1, title: 'x', assigneeId: 3 }), 422, 'ASSIGNEE_NOT_FOUND');
      const rows = await database.db.query('SELECT 1 FROM tasks WHERE id > 200');
      assert.equal(rows.length, 0);
    });

    it('makes one task for a retried Idempotency-Key, replayed as the 201 with its headers', async (t) => {
      const { alice, database } = await signedIn(t);
      const headers = { 'idempotency-key': 'create-0001' };
      const body = { clientId: 1, title: 'Once' };
      const first = await create(alice, body, headers);
      assert.equal(first.statusCode, 201);
      const again = await create(alice, body, headers);
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers.location, first.headers.location);
      assert.equal(again.headers.etag, first.headers.etag);
      assert.deepEqual(again.json(), first.json());
      assertError(await create(alice, { ...body, title: 'Other' }, headers), 422, 'IDEMPOTENCY_KEY_REUSED');
      const rows = await database.db.query("SELECT id FROM tasks WHERE title IN ('Once', 'Other')");
      assert.equal(rows.length, 1);
      // A refused create leaves the key free: the same key, fixed, creates.
      const key = { 'idempotency-key': 'create-0002' };
      assertError(await create(alice, { clientId: 999, title: 'Later' }, key), 422, 'CLIENT_NOT_FOUND');
      const fixed = await create(alice, { clientId: 1, title: 'Later' }, key);
      assert.equal(fixed.statusCode, 201);
      assert.equal(fixed.headers['idempotent-replayed'], undefined);
      assertError(
        await create(alice, body, { 'idempotency-key': 'bad\u0001' }),
        400,
        'IDEMPOTENCY_KEY_INVALID',
      );
    });

    it("keeps one caller's create keys from another's: bob's equal key makes bob's own task", async (t) => {
      const { alice, database, client } = await signedIn(t);
      const bob = client();
      await bob.login('bob@example.com');
      const headers = { 'idempotency-key': 'shared-key' };
      const mine = taskOf(await create(alice, { clientId: 1, title: 'Shared' }, headers));
      const theirs = await create(bob, { clientId: 1, title: 'Shared' }, headers);
      assert.equal(theirs.statusCode, 201);
      assert.equal(theirs.headers['idempotent-replayed'], undefined);
      assert.notEqual(taskOf(theirs).id, mine.id);
      assert.equal(taskOf(theirs).createdBy, BOB_ID);
      const rows = await database.db.query("SELECT id FROM tasks WHERE title = 'Shared'");
      assert.equal(rows.length, 2);
    });

    it('needs a session and a CSRF token', async (t) => {
      const testApp = await createTestApp({ database: kind });
      t.after(testApp.close);
      const stranger = testApp.client();
      await stranger.fetchCsrf();
      assertError(await create(stranger, { clientId: 1, title: 'x' }), 401, 'UNAUTHENTICATED');
      const alice = testApp.client();
      await alice.login('alice@example.com');
      const response = await alice.request({
        method: 'POST',
        url: TASKS,
        csrf: false,
        payload: { clientId: 1, title: 'x' },
      });
      assertError(response, 403, 'CSRF_INVALID');
    });
  });

  describe(`tasks: edit under If-Match (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('edits with the current ETag: a new version and ETag, an edit entry with from and to', async (t) => {
      const { alice, clock } = await signedIn(t);
      const before = await read(alice, 7);
      assert.equal(before.etag, '"v1"');
      clock.advance(60_000);
      const response = await edit(
        alice,
        7,
        { priority: 'high', dueDate: '2026-12-31', title: before.task.title },
        before.etag,
      );
      assert.equal(response.statusCode, 200, response.body);
      const task = taskOf(response);
      assert.equal(task.version, 2);
      assert.equal(response.headers.etag, '"v2"');
      assert.equal(task.updatedAt, new Date(clock.now()).toISOString());
      assert.deepEqual(await read(alice, 7), { task, etag: '"v2"' });
      const [entry] = (await history(alice, 7)).entries;
      assert.equal(entry!.source, 'edit');
      assert.deepEqual(entry!.actor, { id: 1, name: 'Alice Martin' });
      assert.deepEqual(entry!.changes, [
        { field: 'priority', from: 'normal', to: 'high' },
        { field: 'dueDate', from: null, to: '2026-12-31' },
      ]);
    });

    it('answers 428 without If-Match and 412 with the current task for a stale one, changing nothing', async (t) => {
      const { alice } = await signedIn(t);
      const { etag } = await read(alice, 8);
      assertError(await edit(alice, 8, { title: 'No tag' }), 428, 'PRECONDITION_REQUIRED');
      assert.equal((await edit(alice, 8, { title: 'First' }, etag)).statusCode, 200);
      const staleAnswer = await edit(alice, 8, { title: 'Second' }, etag);
      const stale = assertError(staleAnswer, 412, 'TASK_CHANGED');
      const now = await read(alice, 8);
      assert.deepEqual(stale.task, now.task);
      assert.equal(staleAnswer.headers.etag, now.etag);
      assert.equal(now.task.title, 'First');
      for (const tag of ['W/"v2"', '"2"', 'v2', '"v02"', 'garbage', '""'])
        assertError(await edit(alice, 8, { title: 'Weak' }, tag), 412, 'TASK_CHANGED');
      assert.equal((await edit(alice, 8, { title: 'Listed' }, `"v1", ${now.etag}`)).statusCode, 200);
      assert.equal((await history(alice, 8)).entries.length, 2);
    });

    it('takes If-Match: * for any version', async (t) => {
      const { alice } = await signedIn(t);
      await edit(alice, 9, { status: 'done' }, '*');
      const response = await edit(alice, 9, { status: 'open' }, '*');
      assert.equal(response.statusCode, 200);
      assert.equal(taskOf(response).version, 3);
    });

    it('answers a no-op edit with the task unchanged: same version, no entry', async (t) => {
      const { alice } = await signedIn(t);
      const before = await read(alice, 10);
      const same = { title: before.task.title, status: before.task.status, clientId: before.task.clientId };
      for (const body of [same, {}]) {
        const response = await edit(alice, 10, body, before.etag);
        assert.equal(response.statusCode, 200);
        assert.deepEqual(taskOf(response), before.task);
        assert.equal(response.headers.etag, before.etag);
      }
      assert.deepEqual((await history(alice, 10)).entries, []);
    });

    it('checks in order: 400, then 404, then 428/412, then 422', async (t) => {
      const { alice } = await signedIn(t);
      const { etag } = await read(alice, 11);
      // A broken field before the task's existence and the precondition.
      assertError(await edit(alice, 99_999, { status: 'nope' }), 400, 'VALIDATION_ERROR');
      assertError(await edit(alice, 99_999, { status: 'done' }), 404, 'NOT_FOUND');
      assertError(await edit(alice, 11, { clientId: 999 }), 428, 'PRECONDITION_REQUIRED');
      assertError(await edit(alice, 11, { clientId: 999 }, '"v9"'), 412, 'TASK_CHANGED');
      assertError(await edit(alice, 11, { clientId: 999 }, etag), 422, 'CLIENT_NOT_FOUND');
      assertError(await edit(alice, 11, { assigneeId: ADMIN_ID }, etag), 422, 'ASSIGNEE_NOT_FOUND');
      assertError(await edit(alice, 11, { title: 'x', extra: 1 }, etag), 400, 'VALIDATION_ERROR');
      assertError(await edit(alice, 11, { dueDate: '2026-04-31' }, etag), 400, 'VALIDATION_ERROR');
      assert.equal((await read(alice, 11)).task.version, 1);
      // Unassigning and clearing the due date are changes.
      const cleared = await edit(alice, 11, { assigneeId: null, dueDate: null }, etag);
      assert.equal(cleared.statusCode, 200, cleared.body);
    });

    it('lets ten edits racing with one ETag end with one 200 and nine 412', async (t) => {
      const { alice } = await signedIn(t);
      const { etag } = await read(alice, 12);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => edit(alice, 12, { title: `Racer ${i}` }, etag)),
      );
      const statuses = answers.map((a) => a.statusCode).sort();
      assert.deepEqual(statuses, [200, ...Array(9).fill(412)]);
      const { task } = await read(alice, 12);
      assert.equal(task.version, 2);
      const winner = answers.find((a) => a.statusCode === 200)!;
      assert.deepEqual(taskOf(winner), task);
      assert.equal((await history(alice, 12)).entries.length, 1);
    });
  });

  describe(`tasks: history and bulk (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('pages history newest first, 50 a page, with an opaque cursor', async (t) => {
      const { alice } = await signedIn(t);
      let etag = (await read(alice, 13)).etag;
      for (let i = 1; i <= 53; i++) {
        const response = await edit(alice, 13, { description: `step ${i}` }, etag);
        assert.equal(response.statusCode, 200);
        etag = String(response.headers.etag);
      }
      const first = await history(alice, 13);
      assert.equal(first.entries.length, 50);
      assert.equal(first.entries[0]!.changes[0]!.to, 'step 53');
      assert.ok(first.nextCursor);
      const second = await history(alice, 13, first.nextCursor);
      assert.deepEqual(
        second.entries.map((e) => e.changes[0]!.to),
        ['step 3', 'step 2', 'step 1'],
      );
      assert.equal(second.nextCursor, null);
      const ids = [...first.entries, ...second.entries].map((e) => e.id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => b - a),
      );
      assertError(await alice.get(`${TASKS}/13/history?cursor=forged`), 400, 'VALIDATION_ERROR');
      assertError(await alice.get(`${TASKS}/99999/history`), 404, 'NOT_FOUND');
    });

    it('bulk: moved tasks get a new version and a bulk entry; one already with the target does not', async (t) => {
      const { alice } = await signedIn(t);
      const before = await read(alice, 1);
      const target = before.task.assigneeId === BOB_ID ? 3 : BOB_ID;
      const stay = await read(alice, 2);
      const response = await send(alice, 'PATCH', `${TASKS}/bulk`, {
        taskIds: [1, 2, 1],
        assigneeId: stay.task.assigneeId ?? 1,
      });
      assert.equal(response.statusCode, 200);
      // Task 2 already had that assignee: unchanged, no entry.
      assert.deepEqual(await read(alice, 2), stay);
      assert.deepEqual((await history(alice, 2)).entries, []);
      const moved = await send(alice, 'PATCH', `${TASKS}/bulk`, { taskIds: [1], assigneeId: target });
      assert.equal(moved.statusCode, 200);
      const after = await read(alice, 1);
      assert.equal(after.task.assigneeId, target);
      assert.notEqual(after.etag, before.etag);
      const entries = (await history(alice, 1)).entries;
      const last = entries[0]!;
      assert.equal(last.source, 'bulk');
      assert.deepEqual(last.actor, { id: 1, name: 'Alice Martin' });
      assert.deepEqual(last.changes, [
        {
          field: 'assigneeId',
          from: entries.length === 2 ? (stay.task.assigneeId ?? 1) : before.task.assigneeId,
          to: target,
        },
      ]);
      // The old ETag no longer edits.
      assertError(await edit(alice, 1, { title: 'late' }, before.etag), 412, 'TASK_CHANGED');
      assert.equal(after.task.version, before.task.version + entries.length);
    });

    it('lists tasks with their new fields', async (t) => {
      const { alice } = await signedIn(t);
      const response = await alice.get(`${TASKS}?limit=1`);
      const [task] = response.json<{ tasks: Task[] }>().tasks;
      assert.deepEqual(Object.keys(task!).sort(), [
        'assigneeId',
        'clientId',
        'createdAt',
        'createdBy',
        'description',
        'dueDate',
        'id',
        'priority',
        'status',
        'title',
        'updatedAt',
        'version',
      ]);
      assert.equal(task!.createdBy, null);
      assert.equal(task!.version, 1);
    });
  });
}
