// Task pages by filter and sort, one keyset at a time (docs/rules.md#finding-tasks): the SQL behind the list and the export.
import type { Task, TaskPosition, TaskSearch, TaskSort } from '../../domain.ts';
import type { Queryable } from '../database.ts';
import { TASK_COLUMNS, type TaskRow, toTask } from './task-rows.ts';

/**
 * Each sort: the expression its index (migration 016) is built on, its direction, and the type a
 * cursor's text is read back as. The id breaks ties in the same direction, so one row comparison
 * against the cursor walks the index.
 */
const SORT_SQL: Readonly<Record<TaskSort, { key: string; type: string; descending: boolean } | null>> = {
  id: null,
  '-updatedAt': { key: 't.updated_at', type: 'timestamptz', descending: true },
  dueDate: { key: "coalesce(t.due_date, 'infinity'::date)", type: 'date', descending: false },
  '-priority': {
    key: "(CASE t.priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END)",
    type: 'int',
    descending: false,
  },
};

/** The words of title and description, kept in a column of their own (migration 017), and indexed. */
const WORDS = 't.words';

/** The words as a text-search query where each word may start a longer one: 'a':* & 'b':*. */
function prefixQuery(words: readonly string[]): string {
  return words.map((word) => `'${word}':*`).join(' & ');
}

/** A task found, with where it sits in its sort (the next cursor's position). */
export interface FoundTask {
  task: Task;
  position: TaskPosition;
  /** By name and email, for the export. */
  clientName: string;
  assigneeEmail: string | null;
}

interface FoundRow extends TaskRow {
  sort_value: string | null;
  mark: string;
  client_name: string;
  assignee_email: string | null;
}

/**
 * A search by words first walks the sort's index (the other filters and the cursor applied) for at
 * most this many rows per task of the page, testing each row's words: when matches are dense, as
 * for broad words, the page fills after a few thousand rows, where the word index would have to
 * read, fetch and sort every match. A walk that ends short of a full page without running out asks
 * the word index instead, which is fast when matches are sparse. Figures: BENCHMARKS.md.
 */
export const WALK_ROWS_PER_TASK = 100;

/**
 * Up to `limit` tasks matching `search`, in its order, after `after` when given. A first page
 * notes the change number the walk starts at; later pages leave out tasks changed since then.
 * `walkRows` bounds the walk of a search by words (see WALK_ROWS_PER_TASK).
 */
export async function findTasks(
  db: Queryable,
  search: TaskSearch,
  after: TaskPosition | undefined,
  limit: number,
  walkRows = limit * WALK_ROWS_PER_TASK,
): Promise<FoundTask[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (search.assigneeId === 'none') where.push('t.assignee_id IS NULL');
  else if (search.assigneeId !== undefined) where.push(`t.assignee_id = ${param(search.assigneeId)}`);
  if (search.clientId !== undefined) where.push(`t.client_id = ${param(search.clientId)}`);
  if (search.statuses) where.push(`t.status = ANY(${param(search.statuses)}::text[])`);
  if (search.priorities) where.push(`t.priority = ANY(${param(search.priorities)}::text[])`);
  if (search.dueBefore !== undefined) where.push(`t.due_date <= ${param(search.dueBefore)}::date`);

  const sort = SORT_SQL[search.sort];
  if (after) {
    if (sort === null) where.push(`t.id > ${param(after.id)}`);
    else {
      const op = sort.descending ? '<' : '>';
      where.push(`(${sort.key}, t.id) ${op} (${param(after.value)}::${sort.type}, ${param(after.id)}::int)`);
      // A changed task may have moved behind the walk; by id nothing moves, so nothing is left out.
      where.push(`t.change_seq <= ${param(after.mark)}::bigint`);
    }
  }
  const direction = sort?.descending ? 'DESC' : 'ASC';
  const order = sort === null ? 't.id' : `${sort.key} ${direction}, t.id ${direction}`;
  const mark = after
    ? `${param(after.mark)}::text`
    : '(SELECT (CASE WHEN is_called THEN last_value ELSE 0 END)::text FROM task_change_seq)';
  const columns = TASK_COLUMNS.split(', ')
    .map((column) => `t.${column}`)
    .join(', ');
  const filtered = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const limitParam = param(limit);
  /**
   * A page from `source` (tasks, or a walk of them, named t): its rows are cut to the page before
   * a client and an assignee are joined to them, so a walk in the sort's order stops at the page.
   */
  const page = (source: string, match: string, extra = '', sourceOrder = order) =>
    `SELECT ${columns}, ${sort === null ? 'NULL' : `(${sort.key})::text`} AS sort_value, ${mark} AS mark,
            c.name AS client_name, u.email AS assignee_email${extra}
       FROM (SELECT * FROM ${source} t ${match} ORDER BY ${sourceOrder} LIMIT ${limitParam}) t
       JOIN clients c ON c.id = t.client_id
       LEFT JOIN users u ON u.id = t.assignee_id
      ORDER BY ${order}`;

  if (search.words.length === 0)
    return (await db.query<FoundRow>(page('tasks', filtered), params)).map(found);

  const words = `${WORDS} @@ to_tsquery('simple', ${param(prefixQuery(search.words))})`;
  // The walk: the first walkRows rows of the sort that pass the other filters, numbered, read in
  // order until the page fills. The walk's last row comes along even when its words do not match:
  // it tells a walk cut short from one that ran out of rows. The sort's key is a column of the
  // walk, so the page is read in the walk's order (an expression of its columns would be sorted).
  const walk = await db.query<FoundRow & { matched: boolean; walked: string }>(
    page(
      `(SELECT t.*, ${sort === null ? 'NULL' : sort.key} AS sort_key, row_number() OVER (ORDER BY ${order}) AS walked
          FROM tasks t ${filtered} ORDER BY ${order} LIMIT ${param(walkRows)})`,
      `WHERE ${words} OR t.walked = ${param(walkRows)}`,
      `, ${words} AS matched, t.walked`,
      sort === null ? 't.id' : `t.sort_key ${direction}, t.id ${direction}`,
    ),
    params,
  );
  params.splice(-2);
  const hits = walk.filter((row) => row.matched);
  // A full page, or a walk that ran out of rows, is the answer; else the word index finds them.
  // As a set of its own (a fence), the matches cannot be read in the sort's order: the planner
  // takes the word index, whatever it guesses of how many match.
  if (hits.length === limit || Number(walk.at(-1)?.walked ?? 0) < walkRows) return hits.map(found);
  return (
    await db.query<FoundRow>(
      `WITH hit AS MATERIALIZED (SELECT t.* FROM tasks t WHERE ${[...where, words].join(' AND ')})
       ${page('hit', '')}`,
      params,
    )
  ).map(found);
}

const found = (row: FoundRow): FoundTask => ({
  task: toTask(row),
  position: { value: row.sort_value, id: row.id, mark: row.mark },
  clientName: row.client_name,
  assigneeEmail: row.assignee_email,
});
