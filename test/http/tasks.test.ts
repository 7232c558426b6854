// Reading tasks and employees (docs/rules.md#endpoints): limits, filters, cursor paging, one task, and 401s.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { createTestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';

after(closeTestDatabases);

interface Task {
  id: number;
  clientId: number;
  title: string;
  status: string;
  assigneeId: number | null;
  updatedAt: string;
}
interface Page {
  tasks: Task[];
  nextCursor: string | null;
}

/** An app with alice signed in, and the whole task list as she first sees it. */
async function signedIn(t: TestContext): Promise<{ alice: TestClient; allTasks: Task[] }> {
  const testApp = await createTestApp();
  t.after(testApp.close);
  const alice = testApp.client();
  await alice.login('alice@example.com');
  const allTasks = (await alice.get('/api/employee/tasks?limit=200')).json<Page>().tasks;
  return { alice, allTasks };
}

async function page(alice: TestClient, query: string): Promise<Page> {
  const response = await alice.get(`/api/employee/tasks${query}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json<Page>();
}

/** Follows nextCursor from the first page to the last; returns every id seen, in order. */
async function walk(alice: TestClient, query: string): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const suffix: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const result = await page(alice, `?${query}${suffix}`);
    ids.push(...result.tasks.map((task) => task.id));
    cursor = result.nextCursor;
    assert.ok(++pages <= 201, 'paging ends');
  } while (cursor !== null);
  return ids;
}

describe('GET /api/employee/tasks', () => {
  it('answers the first 50 tasks by default, oldest id first, each shaped as a Task', async (t) => {
    const { alice } = await signedIn(t);
    const result = await page(alice, '');
    assert.deepEqual(
      result.tasks.map((task) => task.id),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    assert.equal(typeof result.nextCursor, 'string');
    for (const task of result.tasks) {
      assert.deepEqual(Object.keys(task).sort(), [
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
      assert.ok(['open', 'in_progress', 'done'].includes(task.status));
      assert.equal(new Date(task.updatedAt).toISOString(), task.updatedAt);
    }
  });

  it('answers up to 200 tasks, and all 200 with nextCursor null at limit=200', async (t) => {
    const { alice, allTasks } = await signedIn(t);
    assert.equal(allTasks.length, 200);
    assert.equal((await page(alice, '?limit=200')).nextCursor, null);
    assert.equal((await page(alice, '?limit=1')).tasks.length, 1);
  });

  it('answers 400 VALIDATION_ERROR to a limit outside 1–200 or not an integer', async (t) => {
    const { alice } = await signedIn(t);
    for (const limit of ['0', '201', '-1', '1.5', 'abc', '']) {
      assertError(await alice.get(`/api/employee/tasks?limit=${limit}`), 400, 'VALIDATION_ERROR');
    }
  });

  it('filters by assigneeId, clientId and status, alone and together', async (t) => {
    const { alice, allTasks } = await signedIn(t);
    const cases: [string, (task: Task) => boolean][] = [
      ['assigneeId=2', (task) => task.assigneeId === 2],
      ['clientId=3', (task) => task.clientId === 3],
      ['status=done', (task) => task.status === 'done'],
      ['status=in_progress&clientId=1', (task) => task.status === 'in_progress' && task.clientId === 1],
      [
        'assigneeId=1&clientId=2&status=open',
        (t) => t.assigneeId === 1 && t.clientId === 2 && t.status === 'open',
      ],
      ['assigneeId=4', () => false],
    ];
    for (const [query, keep] of cases) {
      const expected = allTasks.filter(keep).map((task) => task.id);
      assert.deepEqual(
        (await page(alice, `?${query}&limit=200`)).tasks.map((task) => task.id),
        expected,
        query,
      );
    }
  });

  it('answers 400 VALIDATION_ERROR to invalid filters', async (t) => {
    const { alice } = await signedIn(t);
    for (const query of [
      'assigneeId=0',
      'assigneeId=abc',
      'clientId=-1',
      'status=closed',
      'status=open&status=closed',
      'priority=whenever',
      'dueBefore=2026-02-30',
      'sort=title',
      'q=',
      'cursor=abc',
    ]) {
      assertError(await alice.get(`/api/employee/tasks?${query}`), 400, 'VALIDATION_ERROR');
    }
  });

  it('walks all 200 tasks exactly once by cursor, ending with nextCursor null', async (t) => {
    const { alice } = await signedIn(t);
    for (const limit of [1, 7, 50, 199]) {
      assert.deepEqual(
        await walk(alice, `limit=${limit}`),
        Array.from({ length: 200 }, (_, i) => i + 1),
        `limit=${limit}`,
      );
    }
  });

  it('walks a filtered list by cursor, keeping the filter', async (t) => {
    const { alice, allTasks } = await signedIn(t);
    const expected = allTasks.filter((task) => task.status === 'open').map((task) => task.id);
    assert.deepEqual(await walk(alice, 'status=open&limit=9'), expected);
  });

  it('answers 400 VALIDATION_ERROR to a cursor it did not issue', async (t) => {
    const { alice } = await signedIn(t);
    const forged = (text: string) => Buffer.from(text).toString('base64url');
    for (const cursor of [
      'garbage',
      '!!!',
      forged('after:x'),
      forged('after:99999999999'),
      forged('after:9999999999'),
      'a'.repeat(65),
    ]) {
      assertError(await alice.get(`/api/employee/tasks?cursor=${cursor}`), 400, 'VALIDATION_ERROR');
    }
  });
});

describe('GET /api/employee/tasks/:id', () => {
  it('answers 200 with the task', async (t) => {
    const { alice, allTasks } = await signedIn(t);
    const response = await alice.get('/api/employee/tasks/42');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { task: allTasks[41] });
  });

  it('answers 404 NOT_FOUND to an id no task has', async (t) => {
    const { alice } = await signedIn(t);
    for (const id of ['201', '999999', '2147483647']) {
      assertError(await alice.get(`/api/employee/tasks/${id}`), 404, 'NOT_FOUND');
    }
  });

  it('answers 400 VALIDATION_ERROR to an id that is not a positive integer', async (t) => {
    const { alice } = await signedIn(t);
    for (const id of ['abc', '0', '-1', '1.5', '2147483648', '1e3x', '%zz']) {
      assertError(await alice.get(`/api/employee/tasks/${id}`), 400, 'VALIDATION_ERROR');
    }
  });
});

describe('GET /api/employee/employees', () => {
  it('answers the three employees, without the admin and with nothing about their passwords', async (t) => {
    const { alice } = await signedIn(t);
    const response = await alice.get('/api/employee/employees');
    assert.equal(response.statusCode, 200);
    const { employees } = response.json<{ employees: Record<string, unknown>[] }>();
    assert.deepEqual(employees.map((user) => user.email).sort(), [
      'alice@example.com',
      'bob@example.com',
      'carol@example.com',
    ]);
    for (const user of employees) {
      // Who has a temporary password (just added or reset) is what a phisher wants: not said here.
      assert.deepEqual(Object.keys(user).sort(), ['email', 'id', 'name', 'role']);
      assert.equal(user.role, 'employee');
    }
  });
});

describe('GET /api/employee/clients', () => {
  it("answers every client's id and name, sorted by name", async (t) => {
    const { alice } = await signedIn(t);
    const response = await alice.get('/api/employee/clients');
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      clients: [
        { id: 2, name: 'Globex Corporation' },
        { id: 3, name: 'Initech' },
        { id: 1, name: 'Northwind Traders' },
      ],
    });
  });

  // Names are unique ignoring case (docs/rules.md#tasks): "acme" and "Acme" cannot both be there.
  it('sorts as people read names: accents after letters, numbers by value', async (t) => {
    const testApp = await createTestApp();
    t.after(testApp.close);
    const { db } = testApp.database;
    const added = ['zeta Labs', 'Émile & Co', 'Acme Corp', 'acme', 'Client 10', 'Client 9', 'Emile Ltd'];
    const rows = await db.query<{ id: number }>(
      'INSERT INTO clients (name) SELECT unnest($1::text[]) RETURNING id',
      [added],
    );
    t.after(() => db.query('DELETE FROM clients WHERE id = ANY($1::int[])', [rows.map((row) => row.id)]));
    const alice = testApp.client();
    await alice.login('alice@example.com');
    const { clients } = (await alice.get('/api/employee/clients')).json<{
      clients: { id: number; name: string }[];
    }>();
    assert.deepEqual(
      clients.map((client) => client.name),
      [
        'acme',
        'Acme Corp',
        'Client 9',
        'Client 10',
        'Émile & Co',
        'Emile Ltd',
        'Globex Corporation',
        'Initech',
        'Northwind Traders',
        'zeta Labs',
      ],
    );
  });

  it('is counted by the generic bucket of the signed-in user, and answers its 429', async (t) => {
    const testApp = await createTestApp({ env: { RATE_LIMIT_AUTHENTICATED: '2/1m' } });
    t.after(testApp.close);
    const alice = testApp.client();
    await alice.login('alice@example.com');
    const first = await alice.get('/api/employee/clients');
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['ratelimit-policy'], '"api-authenticated";q=2;w=60');
    assert.equal(first.headers['ratelimit-remaining'], '1');
    assert.equal((await alice.get('/api/employee/clients')).headers['ratelimit-remaining'], '0');
    const refused = await alice.get('/api/employee/clients');
    assertError(refused, 429, 'API_RATE_LIMIT_AUTHENTICATED');
    assert.equal(refused.headers['retry-after'], '60');
    // The same bucket as every other generic route: the next route is refused too.
    assertError(await alice.get('/api/employee/employees'), 429, 'API_RATE_LIMIT_AUTHENTICATED');
  });

  it('counts an anonymous caller by address, and answers 401 with the headers', async (t) => {
    const testApp = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m' } });
    t.after(testApp.close);
    const anonymous = testApp.client();
    const refused = await anonymous.get('/api/employee/clients');
    assertError(refused, 401, 'UNAUTHENTICATED');
    assert.equal(refused.headers['ratelimit-policy'], '"api-unauthenticated";q=1;w=60');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assertError(await anonymous.get('/api/employee/clients'), 429, 'API_RATE_LIMIT_UNAUTHENTICATED');
  });
});

describe('routes that need a session', () => {
  const routes = [
    { method: 'GET', url: '/api/auth/me' },
    { method: 'GET', url: '/api/employee/tasks' },
    { method: 'GET', url: '/api/employee/tasks/1' },
    { method: 'GET', url: '/api/employee/employees' },
    { method: 'GET', url: '/api/employee/clients' },
    { method: 'POST', url: '/api/auth/logout' },
    { method: 'PATCH', url: '/api/employee/tasks/bulk', payload: { taskIds: [1], assigneeId: 2 } },
    { method: 'POST', url: '/api/admin/login-locks/reset', payload: { email: 'bob@example.com' } },
  ] as const;

  for (const route of routes) {
    it(`${route.method} ${route.url} answers 401 UNAUTHENTICATED without a session`, async (t) => {
      const testApp = await createTestApp();
      t.after(testApp.close);
      const anonymous = testApp.client();
      await anonymous.fetchCsrf(); // a valid pre-session token, so that CSRF is not what refuses
      assertError(await anonymous.request(route), 401, 'UNAUTHENTICATED');
    });
  }
});
