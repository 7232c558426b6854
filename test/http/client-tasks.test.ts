// The typed client's task calls against the real server on a real port: create, get with its ETag, edit under
// If-Match, history, clients.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { ApiClient, ApiError, MemoryCookieJar } from '../../src/client/index.ts';
import { createTestApp, DEMO_PASSWORD } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

describe('ApiClient: tasks', () => {
  it('creates, reads with its ETag, edits under If-Match, meets a 412, reads history; admins add and rename clients', async (t) => {
    const test = await createTestApp();
    t.after(test.close);
    await test.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = test.app.server.address() as AddressInfo;
    const client = () =>
      new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, cookieJar: new MemoryCookieJar() });
    const alice = client();
    await alice.login('alice@example.com', DEMO_PASSWORD);
    const admin = client();
    await admin.login('admin@example.com', DEMO_PASSWORD);

    const added = await admin.createClient('Stark Industries');
    assert.equal((await admin.renameClient(added.id, 'Stark Ltd')).name, 'Stark Ltd');
    const taken = await admin.createClient('stark ltd').catch((error: unknown) => error);
    assert.ok(taken instanceof ApiError && taken.code === 'CLIENT_NAME_TAKEN');

    const created = await alice.createTask({ clientId: added.id, title: 'Suit fitting', priority: 'high' });
    assert.equal(created.replayed, false);
    const again = await alice.createTask(
      { clientId: added.id, title: 'Suit fitting', priority: 'high' },
      { idempotencyKey: created.idempotencyKey },
    );
    assert.equal(again.replayed, true);
    assert.deepEqual(again.task, created.task);
    const read = await alice.getTask(created.task.id);
    assert.deepEqual(read, { task: created.task, etag: created.etag });
    const edited = await alice.editTask(read.task.id, { status: 'in_progress' }, read.etag);
    assert.equal(edited.task.version, 2);
    assert.notEqual(edited.etag, read.etag);
    const stale = await alice
      .editTask(read.task.id, { status: 'done' }, read.etag)
      .catch((error: unknown) => error);
    assert.ok(stale instanceof ApiError && stale.code === 'TASK_CHANGED' && stale.status === 412);
    assert.deepEqual(stale.body.task, edited.task);
    const history = await alice.taskHistory(read.task.id);
    assert.deepEqual(
      history.entries.map((entry) => entry.source),
      ['edit', 'create'],
    );
    assert.equal(history.nextCursor, null);
  });

  it('lists with q, several statuses and a sort, exports CSV and imports it back, reads an IMPORT_INVALID', async (t) => {
    const test = await createTestApp();
    t.after(test.close);
    await test.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = test.app.server.address() as AddressInfo;
    const alice = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, cookieJar: new MemoryCookieJar() });
    await alice.login('alice@example.com', DEMO_PASSWORD);

    const query = { q: 'invoice', status: ['open', 'done'], sort: '-priority', assigneeId: 'none' } as const;
    const first = await alice.listTasks({ ...query, limit: 2 });
    assert.equal(first.tasks.length, 2);
    assert.ok(first.nextCursor);
    const ids = [...first.tasks.map((task) => task.id)];
    for (let cursor: string | null = first.nextCursor; cursor !== null; ) {
      const page = await alice.tasks({ ...query, limit: 2, cursor });
      ids.push(...page.tasks.map((task) => task.id));
      cursor = page.nextCursor;
    }
    for (const id of ids) {
      const { task } = await alice.getTask(id);
      assert.match(task.title, /invoice/i);
      assert.ok(task.status !== 'in_progress' && task.assigneeId === null);
    }

    const exported = await alice.exportTasks(query);
    assert.match(exported.filename, /^tasks-\d{4}-\d{2}-\d{2}\.csv$/);
    assert.equal(exported.csv.trimEnd().split('\r\n').length, ids.length + 1);
    const imported = await alice.importTasks(exported.csv);
    assert.deepEqual(imported.created, ids.length);
    const refused = await alice.importTasks('client,title\r\nNobody,x\r\n').catch((error: unknown) => error);
    assert.ok(refused instanceof ApiError && refused.code === 'IMPORT_INVALID');
    assert.deepEqual(refused.body.errors, [
      { line: 2, column: 'client', code: 'CLIENT_NOT_FOUND', message: 'No client is named "Nobody".' },
    ]);
  });
});
