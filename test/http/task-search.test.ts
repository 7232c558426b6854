// Finding tasks (docs/rules.md#finding-tasks): q, filters, sorts and cursors that return each task once, on
// embedded and PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { findTasks } from '../../src/db/repositories/task-search.ts';
import type { TaskPosition, TaskStatus } from '../../src/domain.ts';
import { searchOf } from '../../src/tasks/task-search.ts';
import { createTestApp, type TestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const skipPostgres = await skipUnless('postgres');
const TASKS = '/api/employee/tasks';
const WORDS = ['alpha', 'alphabet', 'beta', 'gamma', 'Delta', 'ÉCLAIR', 'invoice', 'contract'];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];
const STATUSES = ['open', 'in_progress', 'done'];
const SORTS = ['id', '-updatedAt', 'dueDate', '-priority'] as const;

interface Row {
  id: number;
  title: string;
  description: string;
  status: string;
  priority: string;
  due_date: string | null;
  assignee_id: number | null;
  updated: number;
}
interface Page {
  tasks: { id: number }[];
  nextCursor: string | null;
}

/**
 * The demo tasks given varied descriptions, priorities, due dates and change times (ties
 * included), so each filter and sort has something to tell apart.
 */
async function varied(testApp: TestApp): Promise<void> {
  const { db } = testApp.database;
  await db.query(
    `UPDATE tasks SET
       description = ($1::text[])[(id % 8) + 1] || ' ' || ($1::text[])[(id * 3 % 8) + 1],
       priority = ($2::text[])[(id * 7 % 4) + 1],
       due_date = CASE WHEN id % 5 = 0 THEN NULL ELSE date '2026-01-01' + (id * 13 % 40) END,
       updated_at = timestamptz '2026-06-01 12:00:00.123456+00' - (id * 11 % 23) * interval '1 second'`,
    [WORDS, PRIORITIES],
  );
}

async function allRows(testApp: TestApp): Promise<Row[]> {
  return testApp.database.db.query<Row>(
    `SELECT id, title, description, status, priority, due_date::text AS due_date, assignee_id,
            extract(epoch FROM updated_at)::float8 AS updated FROM tasks`,
  );
}

interface Filter {
  q?: string;
  priority?: string[];
  status?: string[];
  dueBefore?: string;
  assigneeId?: string;
  sort: (typeof SORTS)[number];
}

function queryOf(filter: Filter, limit: number): string {
  const params = new URLSearchParams({ limit: String(limit), sort: filter.sort });
  if (filter.q !== undefined) params.append('q', filter.q);
  for (const p of filter.priority ?? []) params.append('priority', p);
  for (const s of filter.status ?? []) params.append('status', s);
  if (filter.dueBefore) params.append('dueBefore', filter.dueBefore);
  if (filter.assigneeId) params.append('assigneeId', filter.assigneeId);
  return params.toString();
}

/** What the rules say the list holds, in its order, worked out here from the rows. */
function expected(rows: Row[], filter: Filter): number[] {
  const words = (filter.q ?? '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  const rank = (p: string) => ['urgent', 'high', 'normal', 'low'].indexOf(p);
  return rows
    .filter((row) => {
      const tokens = `${row.title} ${row.description}`.toLowerCase().split(/[^\p{L}\p{N}]+/u);
      if (!words.every((w) => tokens.some((token) => token.startsWith(w)))) return false;
      if (filter.priority && !filter.priority.includes(row.priority)) return false;
      if (filter.status && !filter.status.includes(row.status)) return false;
      if (filter.dueBefore && (row.due_date === null || row.due_date > filter.dueBefore)) return false;
      if (filter.assigneeId === 'none' && row.assignee_id !== null) return false;
      if (filter.assigneeId && filter.assigneeId !== 'none' && row.assignee_id !== Number(filter.assigneeId))
        return false;
      return true;
    })
    .sort((a, b) => {
      switch (filter.sort) {
        case 'id':
          return a.id - b.id;
        case '-updatedAt':
          return b.updated - a.updated || b.id - a.id;
        case 'dueDate':
          return (a.due_date ?? '9999').localeCompare(b.due_date ?? '9999') || a.id - b.id;
        default:
          return rank(a.priority) - rank(b.priority) || a.id - b.id;
      }
    })
    .map((row) => row.id);
}

async function walk(client: TestClient, query: string, between?: () => Promise<void>): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    assert.ok(pages <= 250, 'paging ends');
    const response = await client.get(`${TASKS}?${query}${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(response.statusCode, 200, response.body);
    const page = response.json<Page>();
    ids.push(...page.tasks.map((task) => task.id));
    cursor = page.nextCursor;
    if (cursor === null) return ids;
    await between?.();
  }
}

const filterArbitrary: fc.Arbitrary<Filter> = fc.record(
  {
    q: fc.oneof(
      fc.constantFrom(...WORDS, 'alp', 'INV', 'éclair', 'globex', 'call back', 'alpha-beta', '#2'),
      fc.subarray(WORDS, { minLength: 1, maxLength: 2 }).map((w) => w.join(' ')),
    ),
    priority: fc.subarray(PRIORITIES, { minLength: 1 }),
    status: fc.subarray(STATUSES, { minLength: 1 }),
    dueBefore: fc.constantFrom('2026-01-05', '2026-01-20', '2026-02-09'),
    assigneeId: fc.constantFrom('none', '1', '2', '3'),
    sort: fc.constantFrom(...SORTS),
  },
  { requiredKeys: ['sort'] },
);

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`tasks: search, filters and sorts (${kind})`, {
    skip: kind === 'postgres' && skipPostgres,
  }, () => {
    it('walks every page of any filter and sort: each matching task once, in the sort order', async (t) => {
      const testApp = await createTestApp({ database: kind });
      t.after(testApp.close);
      await varied(testApp);
      const rows = await allRows(testApp);
      const alice = testApp.client();
      await alice.login('alice@example.com');
      await fc.assert(
        fc.asyncProperty(filterArbitrary, fc.integer({ min: 1, max: 70 }), async (filter, limit) => {
          assert.deepEqual(await walk(alice, queryOf(filter, limit)), expected(rows, filter));
        }),
        { numRuns: 40 },
      );
      // Each sort with no filter, through every page.
      for (const sort of SORTS)
        assert.deepEqual(await walk(alice, queryOf({ sort }, 17)), expected(rows, { sort }), sort);
    });

    it('finds the same pages whether the walk of the sort fills them or the word index answers', async (t) => {
      const testApp = await createTestApp({ database: kind });
      t.after(testApp.close);
      await varied(testApp);
      const rows = await allRows(testApp);
      const { db } = testApp.database;
      const qFilter = filterArbitrary.filter((filter) => filter.q !== undefined);
      // A walk of 1 row ends short of any page of 2 or more: the word index answers every page.
      await fc.assert(
        fc.asyncProperty(
          qFilter,
          fc.integer({ min: 1, max: 40 }),
          fc.constantFrom(1, 3, 40, undefined),
          async (filter, limit, walkRows) => {
            const search = searchOf({
              ...filter,
              status: filter.status as TaskStatus[] | undefined,
            } as Parameters<typeof searchOf>[0]);
            const ids: number[] = [];
            let after: TaskPosition | undefined;
            for (let pages = 0; pages <= 250; pages++) {
              const page = await findTasks(db, search, after, limit, walkRows);
              ids.push(...page.map((found) => found.task.id));
              if (page.length < limit) break;
              after = page[page.length - 1]!.position;
            }
            assert.deepEqual(ids, expected(rows, filter), `walkRows ${walkRows}`);
          },
        ),
        { numRuns: 40 },
      );
    });

    it('never shows a task twice while others change the tasks it sorts by', async (t) => {
      const testApp = await createTestApp({ database: kind });
      t.after(testApp.close);
      await varied(testApp);
      const alice = testApp.client();
      await alice.login('alice@example.com');
      const bob = testApp.client();
      await bob.login('bob@example.com');
      let turn = 0;
      const editSome = async () => {
        // Move tasks both ahead of and behind the walk: to the end and to the start of each sort.
        for (const id of [1 + ((turn * 37) % 200), 1 + ((turn * 53 + 7) % 200), 200 - turn]) {
          testApp.clock.advance(1000);
          const body =
            turn % 2 === 0
              ? { dueDate: '2027-12-31', priority: 'low' }
              : { dueDate: '2025-01-01', priority: 'urgent' };
          const response = await bob.request({
            method: 'PATCH',
            url: `${TASKS}/${id}`,
            payload: JSON.stringify(body),
            headers: { 'content-type': 'application/json', 'if-match': '*' },
          });
          assert.equal(response.statusCode, 200, response.body);
        }
        turn++;
      };
      for (const sort of SORTS) {
        const ids = await walk(alice, queryOf({ sort }, 9), editSome);
        assert.equal(new Set(ids).size, ids.length, `${sort}: a task twice`);
        assert.ok(ids.length > 100, `${sort}: the walk went on`);
      }
    });

    it('answers 400 VALIDATION_ERROR naming the parameter, and treats q as words only', async (t) => {
      const testApp = await createTestApp({ database: kind });
      t.after(testApp.close);
      const alice = testApp.client();
      await alice.login('alice@example.com');
      for (const [query, parameter] of [
        ['q=', 'q'],
        [`q=${'a'.repeat(201)}`, 'q'],
        ['q=%21%26%7C', 'q'],
        ['priority=soon', 'priority'],
        ['dueBefore=2026-02-30', 'dueBefore'],
        ['dueBefore=tomorrow', 'dueBefore'],
        ['assigneeId=nobody', 'assigneeId'],
        ['assigneeId=99999999999', 'assigneeId'],
        ['sort=title', 'sort'],
        ['status=closed', 'status'],
        ['cursor=bm90IGEgY3Vyc29y', 'cursor'],
      ]) {
        const response = await alice.get(`${TASKS}?${query}`);
        assertError(response, 400, 'VALIDATION_ERROR');
        assert.match(response.body, new RegExp(`querystring/${parameter}`), query);
      }
      // Text-search syntax in q is only punctuation between words: a 200 when words remain, else a 400.
      for (const q of ["alpha' & !beta:*|(", 'a:* | b', '!!x', "x'y\\z"]) {
        const response = await alice.get(`${TASKS}?${new URLSearchParams({ q })}`);
        assert.equal(response.statusCode, 200, `${q}: ${response.body}`);
      }
      for (const q of ["'':*", '\\', '<->', '&'])
        assertError(await alice.get(`${TASKS}?${new URLSearchParams({ q })}`), 400, 'VALIDATION_ERROR');
      // A cursor belongs to its filter and its sort.
      const first = (await alice.get(`${TASKS}?limit=5&sort=dueDate`)).json<Page>();
      assert.ok(first.nextCursor);
      for (const other of ['sort=id', 'sort=-priority', 'sort=dueDate&status=open', 'sort=dueDate&q=call'])
        assertError(
          await alice.get(`${TASKS}?limit=5&${other}&cursor=${first.nextCursor}`),
          400,
          'VALIDATION_ERROR',
        );
      assert.equal(
        (await alice.get(`${TASKS}?limit=5&sort=dueDate&cursor=${first.nextCursor}`)).statusCode,
        200,
      );
    });
  });
}
