// The demo account can sign in and reassign tasks: the walk-through of the README, over HTTP.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

describe('README walk-through', () => {
  it('gets a token, signs in, lists tasks and reassigns three of them', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const alice = client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const list = await alice.get('/api/employee/tasks?limit=3');
    assert.equal(list.statusCode, 200);
    const ids = list.json<{ tasks: { id: number }[] }>().tasks.map((task) => task.id);
    const bulk = await alice.request({
      method: 'PATCH',
      url: '/api/employee/tasks/bulk',
      payload: { taskIds: ids, assigneeId: 2 },
    });
    assert.equal(bulk.statusCode, 200);
    assert.deepEqual(bulk.json(), {
      succeeded: 3,
      failed: 0,
      results: ids.map((taskId) => ({ taskId, status: 'reassigned' })),
    });
  });
});
