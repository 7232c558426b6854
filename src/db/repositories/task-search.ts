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

/** The expression the word index is built on: a query must name it exactly to use it. */
const WORDS = "to_tsvector('simple', t.title || ' ' || t.description)";

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
 * Up to `limit` tasks matching `search`, in its order, after `after` when given. A first page
 * notes the change number the walk starts at; later pages leave out tasks changed since then.
 */
export async function findTasks(
  db: Queryable,
  search: TaskSearch,
  after: TaskPosition | undefined,
  limit: number,
): Promise<FoundTask[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (search.words.length > 0)
    where.push(`${WORDS} @@ to_tsquery('simple', ${param(prefixQuery(search.words))})`);
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
  const rows = await db.query<FoundRow>(
    `SELECT ${columns}, ${sort === null ? 'NULL' : `(${sort.key})::text`} AS sort_value, ${mark} AS mark,
            c.name AS client_name, u.email AS assignee_email
       FROM tasks t
       JOIN clients c ON c.id = t.client_id
       LEFT JOIN users u ON u.id = t.assignee_id
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY ${order} LIMIT ${param(limit)}`,
    params,
  );
  return rows.map((row) => ({
    task: toTask(row),
    position: { value: row.sort_value, id: row.id, mark: row.mark },
    clientName: row.client_name,
    assigneeEmail: row.assignee_email,
  }));
}
