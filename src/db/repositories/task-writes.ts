// Task writes and their history: insert, the conditional update under a version, history pages, the references a task names.
import {
  type FieldChange,
  type HistoryEntry,
  type HistorySource,
  type Task,
  WRITABLE_FIELDS,
  type WritableFields,
} from '../../domain.ts';
import { columnsOf, type Queryable } from '../database.ts';
import { TASK_COLUMNS, type TaskRow, toTask } from './task-rows.ts';
import { maySignInSql } from './users.ts';

/** Writable fields → their columns. */
const COLUMN_OF: Readonly<Record<keyof WritableFields, string>> = {
  clientId: 'client_id',
  title: 'title',
  description: 'description',
  status: 'status',
  priority: 'priority',
  dueDate: 'due_date',
  assigneeId: 'assignee_id',
};

interface HistoryRow {
  id: number;
  at: Date | string;
  actor_id: number | null;
  actor_name: string | null;
  source: HistorySource;
  changes: FieldChange[] | string;
}

const toEntry = (row: HistoryRow): HistoryEntry => ({
  id: row.id,
  at: new Date(row.at).toISOString(),
  actor: row.actor_id === null ? null : { id: row.actor_id, name: row.actor_name ?? '' },
  source: row.source,
  changes: typeof row.changes === 'string' ? JSON.parse(row.changes) : row.changes,
});

/** Epoch ms as a timestamptz parameter. */
const AT = (n: number) => `to_timestamp($${n}::float8 / 1000.0)`;

/** Task `id`; with `lock`, its row stays locked until the transaction ends (an edit under `If-Match: *`). */
export async function findTask(db: Queryable, id: number, lock = false): Promise<Task | null> {
  const [row] = await db.query<TaskRow>(
    `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return row ? toTask(row) : null;
}

export async function clientExists(db: Queryable, id: number): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM clients WHERE id = $1', [id]);
  return rows.length > 0;
}

/** An enabled account with role employee: the only kind of assignee. */
export async function isAssignable(db: Queryable, id: number): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM users u WHERE id = $1 AND role = 'employee' AND ${maySignInSql('u')}`,
    [id],
  );
  return rows.length > 0;
}

/** Inserts a task with the given fields (the rest take their defaults) and returns it. */
export async function insertTask(
  db: Queryable,
  fields: WritableFields & { clientId: number; title: string },
  createdBy: number,
  atMs: number,
): Promise<Task> {
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined) as [
    keyof WritableFields,
    unknown,
  ][];
  const columns = [...entries.map(([field]) => COLUMN_OF[field]), 'created_by', 'created_at', 'updated_at'];
  const values = [...entries.map(([, value]) => value), createdBy, atMs];
  const placeholders = [
    ...entries.map((_, i) => `$${i + 1}`),
    `$${entries.length + 1}`,
    AT(entries.length + 2),
    AT(entries.length + 2),
  ];
  const [row] = await db.query<TaskRow>(
    `INSERT INTO tasks (${columns.join(', ')}) VALUES (${placeholders.join(', ')}) RETURNING ${TASK_COLUMNS}`,
    values,
  );
  return toTask(row!);
}

/**
 * Sets `fields` on task `id` only if it is still at `version`, raising the version by one: the
 * one conditional statement that makes two racing edits of one version end with one winner. Null
 * when the task is not at that version (or not there) any more.
 */
export async function updateAtVersion(
  db: Queryable,
  id: number,
  version: number,
  fields: WritableFields,
  atMs: number,
): Promise<Task | null> {
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined) as [
    keyof WritableFields,
    unknown,
  ][];
  const sets = entries.map(([field], i) => `${COLUMN_OF[field]} = $${i + 3}`);
  const [row] = await db.query<TaskRow>(
    `UPDATE tasks SET ${[...sets, `updated_at = ${AT(entries.length + 3)}`, 'version = version + 1'].join(', ')}
      WHERE id = $1 AND version = $2 RETURNING ${TASK_COLUMNS}`,
    [id, version, ...entries.map(([, value]) => value), atMs],
  );
  return row ? toTask(row) : null;
}

export async function insertHistory(
  db: Queryable,
  entry: {
    taskId: number;
    atMs: number;
    actorId: number | null;
    source: HistorySource;
    changes: FieldChange[];
  },
): Promise<void> {
  await db.query(
    `INSERT INTO task_history (task_id, at, actor_id, source, changes) VALUES ($1, ${AT(2)}, $3, $4, $5::jsonb)`,
    [entry.taskId, entry.atMs, entry.actorId, entry.source, JSON.stringify(entry.changes)],
  );
}

/** A page of a task's history, newest first: entries with an id below `beforeId` when given. */
export async function historyPage(
  db: Queryable,
  taskId: number,
  beforeId: number | undefined,
  limit: number,
): Promise<HistoryEntry[]> {
  const rows = await db.query<HistoryRow>(
    `SELECT h.id, h.at, h.actor_id, u.name AS actor_name, h.source, h.changes
       FROM task_history h LEFT JOIN users u ON u.id = h.actor_id
      WHERE h.task_id = $1 AND ($2::int IS NULL OR h.id < $2::int)
      ORDER BY h.id DESC LIMIT $3`,
    [taskId, beforeId ?? null, limit],
  );
  return rows.map(toEntry);
}

/**
 * Clients by name ignoring case: each of `names` that names a client → its id. The database
 * folds the case, as the unique index on client names does.
 */
export async function clientIdsByName(db: Queryable, names: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.query<{ id: number; given: string }>(
    `SELECT c.id, g.name AS given FROM unnest($1::text[]) AS g(name)
       JOIN clients c ON lower(c.name) = lower(g.name)`,
    [names],
  );
  return new Map(rows.map((row) => [row.given, row.id]));
}

/** Assignable accounts (enabled employees) by email ignoring case: each of `emails` that names one → its id. */
export async function assigneeIdsByEmail(
  db: Queryable,
  emails: readonly string[],
): Promise<Map<string, number>> {
  const rows = await db.query<{ id: number; given: string }>(
    `SELECT u.id, g.email AS given FROM unnest($1::text[]) AS g(email)
       JOIN users u ON lower(u.email) = lower(g.email)
      WHERE u.role = 'employee' AND ${maySignInSql('u')}`,
    [emails],
  );
  return new Map(rows.map((row) => [row.given, row.id]));
}

/** A task as an import creates it: every writable field given (the defaults filled in already). */
export interface ImportedTask {
  clientId: number;
  title: string;
  description: string;
  status: string;
  priority: string;
  dueDate: string | null;
  assigneeId: number | null;
}

/**
 * Inserts `tasks` in their order, with one `import` history entry each listing every field it
 * starts with, in one statement (a multi-row insert from arrays, the same on both databases).
 */
export async function insertImported(
  db: Queryable,
  tasks: readonly ImportedTask[],
  actorId: number,
  atMs: number,
): Promise<void> {
  const field = (name: string, to: string) =>
    `jsonb_build_object('field', '${name}', 'from', NULL, 'to', ${to})`;
  await db.query(
    `WITH input AS (
       SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::date[], $7::int[])
         WITH ORDINALITY AS r(client_id, title, description, status, priority, due_date, assignee_id, ord)
     ), created AS (
       INSERT INTO tasks (client_id, title, description, status, priority, due_date, assignee_id,
                          created_by, created_at, updated_at)
       SELECT client_id, title, description, status, priority, due_date, assignee_id,
              $8, ${AT(9)}, ${AT(9)}
         FROM input ORDER BY ord
       RETURNING id, client_id, title, description, status, priority, due_date, assignee_id, created_at
     )
     INSERT INTO task_history (task_id, at, actor_id, source, changes)
     SELECT id, created_at, $8, 'import', jsonb_build_array(
              ${field('clientId', 'client_id')}, ${field('title', 'title')},
              ${field('description', 'description')}, ${field('status', 'status')},
              ${field('priority', 'priority')}, ${field('dueDate', 'due_date::text')},
              ${field('assigneeId', 'assignee_id')})
       FROM created ORDER BY id`,
    [
      // $1 to $7, in WRITABLE_FIELDS' order, as `input` names them.
      ...columnsOf(tasks, WRITABLE_FIELDS),
      actorId,
      atMs,
    ],
  );
}
