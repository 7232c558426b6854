// Tasks in and out as CSV (docs/rules.md#export-and-import): export format and guard, import's
// all-or-nothing, 413, keys, round trip, its budget; on embedded and PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import type { Task } from '../../src/client/index.ts';
import { createTestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const skipPostgres = await skipUnless('postgres');
const TASKS = '/api/employee/tasks';
const HEADER = ['id', 'client', 'title', 'description', 'status', 'priority', 'dueDate', 'assignee'];

const importCsv = (client: TestClient, csv: string | Buffer, headers: Record<string, string> = {}) =>
  client.request({
    method: 'POST',
    url: `${TASKS}/import`,
    payload: csv,
    headers: { 'content-type': 'text/csv; charset=utf-8', ...headers },
  });

async function allTasks(client: TestClient): Promise<Task[]> {
  const tasks: Task[] = [];
  let cursor: string | null = null;
  do {
    const response = await client.get(`${TASKS}?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    const page = response.json<{ tasks: Task[]; nextCursor: string | null }>();
    tasks.push(...page.tasks);
    cursor = page.nextCursor;
  } while (cursor);
  return tasks;
}

const fields = ({ clientId, title, description, status, priority, dueDate, assigneeId }: Task) => ({
  clientId,
  title,
  description,
  status,
  priority,
  dueDate,
  assigneeId,
});

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`tasks: export and import (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    async function setUp(t: { after(fn: () => Promise<void>): void }, env: Record<string, string> = {}) {
      const testApp = await createTestApp({ database: kind, env });
      t.after(testApp.close);
      const alice = testApp.client();
      await alice.login('alice@example.com');
      return { testApp, alice };
    }

    it('exports the filtered, sorted list as RFC 4180 CSV, formulas guarded, in batches past one', async (t) => {
      const { testApp, alice } = await setUp(t);
      const { db } = testApp.database;
      // More tasks than one batch of the export reads, and cells a spreadsheet would run.
      await db.query(
        `INSERT INTO tasks (client_id, title, status) SELECT 1, 'Bulk ' || n, 'open' FROM generate_series(1, 1100) n`,
      );
      await db.query(
        `UPDATE tasks SET title = '=HYPERLINK("x")', description = E'line one\\nline "two", done',
                          priority = 'urgent', due_date = '2026-03-04' WHERE id = 1`,
      );
      await db.query(
        `UPDATE tasks SET title = '''-already quoted', description = E'\\tindented' WHERE id = 2`,
      );
      const remaining = (answer: { headers: Record<string, unknown> }) =>
        Number(/r=(\d+)/.exec(String(answer.headers.ratelimit))?.[1]);
      const before = remaining(await alice.get(`${TASKS}?limit=1`));
      const response = await alice.get(`${TASKS}/export`);
      assert.equal(response.statusCode, 200, response.body.slice(0, 300));
      // Two batches read, one request of the generic bucket spent.
      assert.match(String(response.headers.ratelimit), /^"api-authenticated";/);
      assert.equal(remaining(response), before - 1);
      assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
      assert.equal(
        response.headers['content-disposition'],
        `attachment; filename="tasks-${new Date(testApp.clock.now()).toISOString().slice(0, 10)}.csv"`,
      );
      assert.ok(response.body.startsWith(`${HEADER.join(',')}\r\n`));
      const rows = parse(response.body, { columns: true }) as Record<string, string>[];
      assert.equal(rows.length, 1300);
      assert.deepEqual(
        rows.map((row) => Number(row.id)),
        Array.from({ length: 1300 }, (_, i) => i + 1),
      );
      assert.deepEqual(rows[0], {
        id: '1',
        client: 'Northwind Traders',
        title: `'=HYPERLINK("x")`,
        description: 'line one\nline "two", done',
        status: rows[0]!.status,
        priority: 'urgent',
        dueDate: '2026-03-04',
        assignee: rows[0]!.assignee,
      });
      assert.equal(rows[1]!.title, "''-already quoted");
      assert.equal(rows[1]!.description, "'\tindented");
      assert.match(rows[0]!.assignee!, /^$|@example\.com$/);

      // The list's filters and sort.
      const filtered = await alice.get(`${TASKS}/export?status=open&sort=-priority&q=bulk`);
      const open = parse(filtered.body, { columns: true }) as Record<string, string>[];
      assert.equal(open.length, 1100);
      assertError(await alice.get(`${TASKS}/export?sort=title`), 400, 'VALIDATION_ERROR');
      assertError(await alice.get(`${TASKS}/export?cursor=abc`), 400, 'VALIDATION_ERROR');
    });

    it('imports a file: columns in any order, defaults, history; an export imports back as equal tasks', async (t) => {
      const { testApp, alice } = await setUp(t);
      const { db } = testApp.database;
      await db.query(`UPDATE tasks SET title = '@sum(1)', description = E'=1+2\\r\\nnext', priority = 'high',
                        due_date = '2026-12-24' WHERE id = 3`);
      const before = await allTasks(alice);
      const exported = (await alice.get(`${TASKS}/export`)).body;
      const response = await importCsv(alice, exported, { 'idempotency-key': 'import-1' });
      assert.equal(response.statusCode, 201, response.body);
      assert.deepEqual(response.json(), { created: before.length });
      const after = await allTasks(alice);
      assert.equal(after.length, before.length * 2);
      assert.deepEqual(after.slice(before.length).map(fields), before.map(fields));
      // The retry is the first answer, and creates nothing more.
      const replay = await importCsv(alice, exported, { 'idempotency-key': 'import-1' });
      assert.equal(replay.statusCode, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal((await allTasks(alice)).length, before.length * 2);
      assertError(
        await importCsv(alice, 'client,title\nNorthwind Traders,x\n', { 'idempotency-key': 'import-1' }),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      );

      // Any order, the rest by default; the import's history entry lists the fields.
      const small = await importCsv(alice, 'title,client\r\nRing back,northwind traders\r\n');
      assert.equal(small.statusCode, 201, small.body);
      const created = (await allTasks(alice)).at(-1)!;
      assert.deepEqual(fields(created), {
        clientId: 1,
        title: 'Ring back',
        description: '',
        status: 'open',
        priority: 'normal',
        dueDate: null,
        assigneeId: null,
      });
      const history = (await alice.get(`${TASKS}/${created.id}/history`)).json<{
        entries: { source: string; actor: { id: number } | null; changes: { field: string }[] }[];
      }>();
      assert.equal(history.entries.length, 1);
      assert.equal(history.entries[0]!.source, 'import');
      assert.equal(history.entries[0]!.actor?.id, 1);
      assert.equal(history.entries[0]!.changes.length, 7);

      // A client's name ignoring case beyond ASCII, as the database folds it; an assignee's email too.
      await db.query("INSERT INTO clients (name) VALUES ('Élan Vital')");
      const folded = await importCsv(alice, 'client,title,assignee\n ÉLAN VITAL ,Élan,BOB@example.com\n');
      assert.equal(folded.statusCode, 201, folded.body);

      // Past one INSERT batch: every row, each with its entry, in file order.
      const lines = Array.from({ length: 2500 }, (_, i) => `Initech,Row ${i}`);
      const many = await importCsv(alice, `client,title\n${lines.join('\n')}\n`);
      assert.equal(many.statusCode, 201, many.body);
      const [counts] = await db.query<{ tasks: number; entries: number; ordered: boolean }>(
        `SELECT count(*)::int AS tasks,
                (SELECT count(*)::int FROM task_history h JOIN tasks t ON t.id = h.task_id
                  WHERE t.title LIKE 'Row %' AND h.source = 'import') AS entries,
                bool_and(title = 'Row ' || (id - min_id)) AS ordered
           FROM (SELECT id, title, min(id) OVER () AS min_id FROM tasks WHERE title LIKE 'Row %') r`,
      );
      assert.deepEqual(counts, { tasks: 2500, entries: 2500, ordered: true });
    });

    it('counts a description in characters as a create does: 10,000 emoji export and import back, 10,001 are refused', async (t) => {
      const { alice } = await setUp(t);
      const description = '😀'.repeat(10_000);
      const created = await alice.request({
        method: 'POST',
        url: TASKS,
        payload: JSON.stringify({ clientId: 3, title: 'Emoji wall', description }),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const exported = (await alice.get(`${TASKS}/export?q=emoji`)).body;
      const response = await importCsv(alice, exported);
      assert.equal(response.statusCode, 201, response.body);
      assert.deepEqual(response.json(), { created: 1 });
      const copies = (await allTasks(alice)).filter((task) => task.title === 'Emoji wall');
      assert.deepEqual(
        copies.map((task) => task.description.length),
        [20_000, 20_000],
      );
      const tooLong = await importCsv(alice, `client,title,description\nInitech,Wall,${description}😀\n`);
      assertError(tooLong, 422, 'IMPORT_INVALID');
    });

    it('refuses a file with any wrong row: 422 by spreadsheet line and column, nothing created', async (t) => {
      const { alice } = await setUp(t);
      const count = (await allTasks(alice)).length;
      const csv = [
        'client,title,description,status,priority,dueDate,assignee',
        'Northwind Traders,Fine,"two\nlines",open,low,2026-01-31,bob@example.com', // line 2, two lines of text
        'Nobody Inc,Title,,,,,', // 3
        'Northwind Traders,,,closed,soon,2026-02-30,', // 4
        '', // 5: blank, skipped but counted
        'Northwind Traders,Ok,,,,,carol@nowhere.example', // 6
        'Northwind Traders,Ok,,,,,,extra', // 7
      ].join('\r\n');
      const response = await importCsv(alice, csv);
      assertError(response, 422, 'IMPORT_INVALID');
      const errors = response.json<{ errors: { line: number; column: string; code: string }[] }>().errors;
      assert.deepEqual(
        errors.map(({ line, column, code }) => `${line} ${column} ${code}`),
        [
          '3 client CLIENT_NOT_FOUND',
          '4 status INVALID',
          '4 priority INVALID',
          '4 title REQUIRED',
          '4 dueDate INVALID',
          '6 assignee ASSIGNEE_NOT_FOUND',
          '7  EXTRA_CELLS',
        ],
      );
      assert.equal((await allTasks(alice)).length, count);

      // The first 100 errors only.
      const many = `client,title\n${'Nobody,x\n'.repeat(150)}`;
      const manyErrors = (await importCsv(alice, many)).json<{ errors: unknown[] }>().errors;
      assert.equal(manyErrors.length, 100);
    });

    it('answers 400 to a file that is not CSV or has no header, and 413 past 20 MiB', async (t) => {
      const { alice } = await setUp(t);
      for (const csv of [
        '',
        'title\nx\n',
        'client,title,colour\nA,b,c\n',
        'client,title\n"unclosed,x\n',
        'client,title\u0000\n',
      ])
        assertError(await importCsv(alice, csv), 400, 'VALIDATION_ERROR');
      const json = await alice.request({
        method: 'POST',
        url: `${TASKS}/import`,
        payload: JSON.stringify({ client: 'x' }),
        headers: { 'content-type': 'application/json' },
      });
      assertError(json, 400, 'VALIDATION_ERROR');
      const rows = (n: number) => `client,title\n${'Northwind Traders,x\n'.repeat(n)}`;
      const tooMany = await importCsv(alice, rows(100_001));
      assertError(tooMany, 413, 'PAYLOAD_TOO_LARGE');
      assert.match(tooMany.json<{ message: string }>().message, /100,000 rows/);
      const big = Buffer.alloc(20 * 1024 * 1024 + 1, 'a');
      assertError(await importCsv(alice, big), 413, 'PAYLOAD_TOO_LARGE');
      // The JSON routes keep their 64 KiB.
      const bigJson = await alice.request({
        method: 'POST',
        url: TASKS,
        payload: JSON.stringify({ clientId: 1, title: 'x', description: 'y'.repeat(70 * 1024) }),
        headers: { 'content-type': 'application/json' },
      });
      assertError(bigJson, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('spends its own budget, task-import, on every request: 429 TASK_IMPORT_RATE_LIMIT, listed by /api/rate-limits', async (t) => {
      const { testApp, alice } = await setUp(t, { RATE_LIMIT_TASK_IMPORT: '2/1h' });
      const generic = async () =>
        (await alice.get('/api/rate-limits')).json<{ controls: { control: string; remaining: number }[] }>();
      const before = await generic();
      assert.ok(
        before.controls.some((l) => l.control === 'task-import' && l.remaining === 2),
        JSON.stringify(before),
      );
      assert.equal((await importCsv(alice, 'client,title\nNorthwind Traders,a\n')).statusCode, 201);
      assertError(await importCsv(alice, 'client,title\nNobody,a\n'), 422, 'IMPORT_INVALID');
      const refused = await importCsv(alice, 'client,title\nNorthwind Traders,b\n');
      assertError(refused, 429, 'TASK_IMPORT_RATE_LIMIT');
      assert.ok(refused.headers['retry-after']);
      const after = await generic();
      const authenticated = (list: typeof before) =>
        list.controls.find((l) => l.control === 'api-authenticated')!.remaining;
      // Imports spend nothing of the generic bucket (and reading the budgets spends nothing).
      assert.equal(authenticated(before) - authenticated(after), 0);
      assert.ok(after.controls.some((l) => l.control === 'task-import' && l.remaining === 0));
      // Bob's budget is his own.
      const bob = testApp.client();
      await bob.login('bob@example.com');
      assert.equal((await importCsv(bob, 'client,title\nNorthwind Traders,c\n')).statusCode, 201);
    });
  });
}
