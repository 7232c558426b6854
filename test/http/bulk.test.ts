// PATCH /api/employee/tasks/bulk (docs/rules.md#bulk-reassignment), on embedded and PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { createTestApp, type TestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind } from '../helpers/database.ts';
import { assertError, taskSnapshot } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const BULK_URL = '/api/employee/tasks/bulk';
const skipPostgres = await skipUnless('postgres');

const bulk = (client: TestClient, payload: unknown, headers: Record<string, string> = {}) =>
  client.request({
    method: 'PATCH',
    url: BULK_URL,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    headers: { 'content-type': 'application/json', ...headers },
  });

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  /** An app on this database, and alice signed in. */
  const signedIn = async (t: TestContext): Promise<TestApp & { alice: TestClient }> => {
    const testApp = await createTestApp({ database: kind });
    t.after(testApp.close);
    const alice = testApp.client();
    await alice.login('alice@example.com');
    return { ...testApp, alice };
  };
  const assigneeOf = async (client: TestClient, id: number) =>
    (await client.get(`/api/employee/tasks/${id}`)).json<{ task: { assigneeId: number | null } }>().task
      .assigneeId;

  describe(`PATCH ${BULK_URL} (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('reassigns the tasks and reports them in request order', async (t) => {
      const { alice } = await signedIn(t);
      const taskIds = [5, 1, 9, 140];
      const response = await bulk(alice, { taskIds, assigneeId: 3 });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), {
        succeeded: 4,
        failed: 0,
        results: taskIds.map((taskId) => ({ taskId, status: 'reassigned' })),
      });
      for (const id of taskIds) assert.equal(await assigneeOf(alice, id), 3);
    });

    it('reports NOT_FOUND and DUPLICATE, processing the first occurrence of a repeated id', async (t) => {
      const { alice } = await signedIn(t);
      const taskIds = [4, 9999, 4, 10, 9999, 10, 4];
      const response = await bulk(alice, { taskIds, assigneeId: 1 });
      assert.equal(response.statusCode, 200);
      const body = response.json<{ succeeded: number; failed: number; results: unknown[] }>();
      assert.deepEqual(body, {
        succeeded: 2,
        failed: 5,
        results: [
          { taskId: 4, status: 'reassigned' },
          { taskId: 9999, status: 'failed', reason: 'NOT_FOUND' },
          { taskId: 4, status: 'failed', reason: 'DUPLICATE' },
          { taskId: 10, status: 'reassigned' },
          { taskId: 9999, status: 'failed', reason: 'DUPLICATE' },
          { taskId: 10, status: 'failed', reason: 'DUPLICATE' },
          { taskId: 4, status: 'failed', reason: 'DUPLICATE' },
        ],
      });
      assert.equal(body.succeeded + body.failed, taskIds.length);
      assert.equal(await assigneeOf(alice, 4), 1);
      assert.equal(await assigneeOf(alice, 10), 1);
    });

    it('counts a task already assigned to the target as reassigned', async (t) => {
      const { alice } = await signedIn(t);
      const current = await assigneeOf(alice, 1);
      assert.ok(current !== null);
      const response = await bulk(alice, { taskIds: [1], assigneeId: current });
      assert.deepEqual(response.json(), {
        succeeded: 1,
        failed: 0,
        results: [{ taskId: 1, status: 'reassigned' }],
      });
    });

    it('reports every id as NOT_FOUND when none exists, with nothing changed', async (t) => {
      const testApp = await signedIn(t);
      const before = await taskSnapshot(testApp);
      const response = await bulk(testApp.alice, { taskIds: [201, 202], assigneeId: 2 });
      assert.deepEqual(response.json(), {
        succeeded: 0,
        failed: 2,
        results: [
          { taskId: 201, status: 'failed', reason: 'NOT_FOUND' },
          { taskId: 202, status: 'failed', reason: 'NOT_FOUND' },
        ],
      });
      assert.deepEqual(await taskSnapshot(testApp), before);
    });

    it('accepts 50 ids', async (t) => {
      const { alice } = await signedIn(t);
      const taskIds = Array.from({ length: 50 }, (_, i) => i + 101);
      const response = await bulk(alice, { taskIds, assigneeId: 2 });
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().succeeded, 50);
    });

    it('answers 400 TASK_BULK_TOO_LARGE with max 50 to 51 ids, with no task changed', async (t) => {
      const testApp = await signedIn(t);
      const before = await taskSnapshot(testApp);
      for (const taskIds of [Array.from({ length: 51 }, (_, i) => i + 1), Array(500).fill(1)]) {
        const body = assertError(
          await bulk(testApp.alice, { taskIds, assigneeId: 2 }),
          400,
          'TASK_BULK_TOO_LARGE',
        );
        assert.equal(body.max, 50);
      }
      assert.deepEqual(await taskSnapshot(testApp), before);
    });

    it('answers 400 VALIDATION_ERROR to empty, mistyped, missing and extra fields, with nothing changed', async (t) => {
      const testApp = await signedIn(t);
      const before = await taskSnapshot(testApp);
      const payloads: unknown[] = [
        { taskIds: [], assigneeId: 2 },
        { taskIds: ['1', '2'], assigneeId: 2 },
        { taskIds: [1.5], assigneeId: 2 },
        { taskIds: [-1], assigneeId: 2 },
        { taskIds: [0], assigneeId: 2 },
        { taskIds: [1, null], assigneeId: 2 },
        { taskIds: [2147483648], assigneeId: 2 },
        { taskIds: 1, assigneeId: 2 },
        { taskIds: [1], assigneeId: '2' },
        { taskIds: [1], assigneeId: 2.5 },
        { taskIds: [1], assigneeId: 0 },
        { taskIds: [1], assigneeId: null },
        { taskIds: [1] },
        { assigneeId: 2 },
        { taskIds: [1], assigneeId: 2, note: 'extra' },
        {},
        [],
        'null',
        '"text"',
      ];
      for (const payload of payloads) {
        assertError(await bulk(testApp.alice, payload), 400, 'VALIDATION_ERROR');
      }
      assert.deepEqual(await taskSnapshot(testApp), before);
    });

    it('answers 422 ASSIGNEE_NOT_FOUND to an unknown assignee or the admin, with nothing changed', async (t) => {
      const testApp = await signedIn(t);
      const before = await taskSnapshot(testApp);
      for (const assigneeId of [999, 4, 2147483647]) {
        assertError(await bulk(testApp.alice, { taskIds: [1, 2, 3], assigneeId }), 422, 'ASSIGNEE_NOT_FOUND');
      }
      assert.deepEqual(await taskSnapshot(testApp), before);
    });

    it('answers 413 PAYLOAD_TOO_LARGE to a body over 64 KiB', async (t) => {
      const testApp = await signedIn(t);
      const before = await taskSnapshot(testApp);
      const padding = ' '.repeat(64 * 1024);
      assertError(
        await bulk(testApp.alice, `{"taskIds":[1],"assigneeId":2}${padding}`),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      assert.deepEqual(await taskSnapshot(testApp), before);
    });

    it('answers 400 INVALID_JSON to a malformed body', async (t) => {
      const { alice } = await signedIn(t);
      for (const text of ['{"taskIds":[1],', '{taskIds:[1]}', "{'a':1}", '', '{"__proto__":{"x":1}}']) {
        assertError(await bulk(alice, text), 400, 'INVALID_JSON');
      }
    });

    it('answers 415 UNSUPPORTED_MEDIA_TYPE to a body that is not JSON', async (t) => {
      const { alice } = await signedIn(t);
      const body = '{"taskIds":[1],"assigneeId":2}';
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        assertError(await bulk(alice, body, { 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
    });
  });

  describe(`order of checks on ${BULK_URL} (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    const tooLarge = `{"taskIds":[1],"assigneeId":2}${' '.repeat(70_000)}`;

    it('answers 413 before 403: an over-size body without a CSRF token', async (t) => {
      const { alice } = await signedIn(t);
      assertError(await bulk(alice, tooLarge, { 'x-csrf-token': 'wrong' }), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('answers 400 INVALID_JSON before 403: a malformed body without a CSRF token', async (t) => {
      const { alice } = await signedIn(t);
      assertError(await bulk(alice, '{', { 'x-csrf-token': 'wrong' }), 400, 'INVALID_JSON');
    });

    it('answers 403 before 401: no CSRF token and no session', async (t) => {
      const { client } = await signedIn(t);
      assertError(await bulk(client(), { taskIds: [1], assigneeId: 2 }), 403, 'CSRF_INVALID');
    });

    it('answers 401 before 400: no session and invalid fields', async (t) => {
      const { client } = await signedIn(t);
      const anonymous = client();
      await anonymous.fetchCsrf();
      assertError(await bulk(anonymous, { taskIds: 'nope' }), 401, 'UNAUTHENTICATED');
      assertError(
        await bulk(anonymous, { taskIds: Array(51).fill(1), assigneeId: 2 }),
        401,
        'UNAUTHENTICATED',
      );
    });

    it('answers 403 CSRF_INVALID before 400: a session, invalid fields and no token', async (t) => {
      const { alice } = await signedIn(t);
      assertError(await bulk(alice, { taskIds: [] }, { 'x-csrf-token': '' }), 403, 'CSRF_INVALID');
    });

    it('answers 400 before 422: too many ids for an unknown assignee', async (t) => {
      const { alice } = await signedIn(t);
      const body = { taskIds: Array.from({ length: 51 }, (_, i) => i + 1), assigneeId: 999 };
      assertError(await bulk(alice, body), 400, 'TASK_BULK_TOO_LARGE');
      assertError(await bulk(alice, { taskIds: [], assigneeId: 999 }), 400, 'VALIDATION_ERROR');
    });

    it('answers 403 FORBIDDEN before 400 on an admin route: an employee with invalid fields', async (t) => {
      const { alice } = await signedIn(t);
      const response = await alice.request({
        method: 'POST',
        url: '/api/admin/login-locks/reset',
        payload: {},
      });
      assertError(response, 403, 'FORBIDDEN');
    });
  });
}
