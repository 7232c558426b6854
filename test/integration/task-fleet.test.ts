// Tasks on a PostgreSQL + Redis fleet of two instances (docs/rules.md#tasks): one winner among edits racing
// with one ETag, one task per create key, versions and history in step.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { sameBrowserOn, twoInstances } from '../helpers/fleet.ts';
import { skipUnless } from '../helpers/services.ts';

const skip = (await skipUnless('redis')) || (await skipUnless('postgres'));
after(closeTestDatabases);

const json = (client: TestClient, method: 'POST' | 'PATCH', url: string, body: unknown, headers = {}) =>
  client.request({
    method,
    url,
    payload: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });

describe('tasks across a PostgreSQL + Redis fleet', { skip }, () => {
  it('lets twenty edits with one ETag across two instances end with one 200 and nineteen 412', async (t) => {
    const { a, b } = await twoInstances(t);
    const alice = a.client();
    await alice.login('alice@example.com');
    const onB = sameBrowserOn(b, alice);
    const { etag } = (await alice.get('/api/employee/tasks/21')).headers;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        json(
          i % 2 ? onB : alice,
          'PATCH',
          '/api/employee/tasks/21',
          { title: `Racer ${i}` },
          { 'if-match': String(etag) },
        ),
      ),
    );
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, ...Array(19).fill(412)]);
    const rows = await a.database.db.query<{ version: number; entries: number }>(
      `SELECT version, (SELECT count(*)::int FROM task_history WHERE task_id = 21) AS entries FROM tasks WHERE id = 21`,
    );
    assert.deepEqual(rows, [{ version: 2, entries: 1 }]);
  });

  it('makes one task of twenty creates with one Idempotency-Key across two instances', async (t) => {
    const { a, b } = await twoInstances(t);
    const alice = a.client();
    await alice.login('alice@example.com');
    const onB = sameBrowserOn(b, alice);
    const body = { clientId: 1, title: 'Exactly once' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        json(i % 2 ? onB : alice, 'POST', '/api/employee/tasks', body, {
          'idempotency-key': 'fleet-create-1',
        }),
      ),
    );
    // The rest are replays of the 201 or 409 IDEMPOTENCY_KEY_IN_FLIGHT while it ran: never a second task.
    for (const answer of answers) assert.ok([201, 409].includes(answer.statusCode), answer.body);
    const created = await a.database.db.query("SELECT id FROM tasks WHERE title = 'Exactly once'");
    assert.equal(created.length, 1);
  });

  it('keeps versions and history in step while edits under * and bulk moves race on both instances', async (t) => {
    const { a, b } = await twoInstances(t);
    const alice = a.client();
    await alice.login('alice@example.com');
    const onB = sameBrowserOn(b, alice);
    const work = Array.from({ length: 24 }, (_, i) => {
      const client = i % 2 ? onB : alice;
      return i % 3 === 0
        ? json(client, 'PATCH', '/api/employee/tasks/bulk', {
            taskIds: [22, 23],
            assigneeId: (i % 3) + 1 + (i % 2),
          })
        : json(
            client,
            'PATCH',
            `/api/employee/tasks/${22 + (i % 2)}`,
            { description: `step ${i}` },
            { 'if-match': '*' },
          );
    });
    for (const answer of await Promise.all(work)) assert.equal(answer.statusCode, 200, answer.body);
    const rows = await a.database.db.query<{ id: number; version: number; entries: number }>(
      `SELECT t.id, t.version, (SELECT count(*)::int FROM task_history h WHERE h.task_id = t.id) AS entries
         FROM tasks t WHERE t.id IN (22, 23) ORDER BY t.id`,
    );
    for (const row of rows) assert.equal(row.version, row.entries + 1, `task ${row.id}`);
  });
});
