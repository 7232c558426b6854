// The typed client's task calls against the real server on a real port: create, get with its ETag, edit under If-Match, history, clients.
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
});
