// Tasks: filtered keyset pagination, one task, and bulk reassignment in one SQL statement.
import type { Task, TaskPosition, TaskSearch, TaskStatus } from '../../domain.ts';
import type { Database, Queryable } from '../database.ts';
import { TASK_COLUMNS as COLUMNS, type TaskRow, toTask } from './task-rows.ts';
import { type FoundTask, findTasks } from './task-search.ts';
import { maySignInSql } from './users.ts';

export interface TaskFilter {
  assigneeId?: number;
  clientId?: number;
  status?: TaskStatus;
  /** Only tasks with an id greater than this (the keyset cursor). */
  afterId?: number;
  limit: number;
}

export type BulkOutcome =
  | { kind: 'assignee-not-found' }
  | { kind: 'done'; results: { taskId: number; outcome: 'reassigned' | 'NOT_FOUND' | 'DUPLICATE' }[] };

/**
 * Work that commits with a reassignment: run in its transaction after the reassignment's statement
 * when it went through (`done`); a throw rolls the reassignment back.
 */
export type AlongsideReassignment = (
  outcome: Extract<BulkOutcome, { kind: 'done' }>,
  connection: Queryable,
) => Promise<void>;

/** Who moves tasks in a bulk reassignment, and when: its history entries say so. */
export interface BulkChange {
  readonly actorId?: number | null;
  /** Epoch ms (the injected clock); the database's clock when absent. */
  readonly atMs?: number;
  /** Work that commits with the reassignment (an Idempotency-Key's answer). */
  readonly alongside?: AlongsideReassignment | undefined;
}

/*
 * Bulk reassignment as one statement, hence one round trip and one atomic change: number the
 * input, keep the first occurrence of each id, and when the assignee is an existing employee who
 * may sign in (a disabled account is no target) lock those tasks, move the ones not already with
 * the assignee (a new version each) and write each moved task's history entry
 * (docs/rules.md#tasks); then report every input position in order. The lock reads each task as
 * it is once any change racing with this one has committed, so the entry's "from" is the value
 * this statement replaced.
 */
const BULK_REASSIGN_SQL = `
WITH input AS (
  SELECT id, ord FROM unnest($1::int[]) WITH ORDINALITY AS t(id, ord)
), firsts AS (
  SELECT id, min(ord) AS ord FROM input GROUP BY id
), assignee AS (
  SELECT id FROM users u WHERE id = $2 AND role = 'employee' AND ${maySignInSql('u')}
), locked AS (
  SELECT t.id, t.assignee_id FROM tasks t
   WHERE t.id IN (SELECT id FROM firsts) AND EXISTS (SELECT 1 FROM assignee)
   ORDER BY t.id
   FOR UPDATE
), moved AS (
  UPDATE tasks t SET assignee_id = $2, updated_at = coalesce(to_timestamp($3::float8 / 1000.0), now()),
         version = t.version + 1
    FROM locked l
   WHERE t.id = l.id AND l.assignee_id IS DISTINCT FROM $2
  RETURNING t.id, l.assignee_id AS old_assignee_id, t.updated_at
), entries AS (
  INSERT INTO task_history (task_id, at, actor_id, source, changes)
  SELECT m.id, m.updated_at, $4::int, 'bulk',
         jsonb_build_array(jsonb_build_object('field', 'assigneeId', 'from', m.old_assignee_id, 'to', $2::int))
    FROM moved m
  RETURNING task_id
)
SELECT i.id, (f.ord = i.ord) AS first, (l.id IS NOT NULL) AS updated,
       EXISTS (SELECT 1 FROM assignee) AS assignee_ok
  FROM input i
  JOIN firsts f ON f.id = i.id
  LEFT JOIN locked l ON l.id = i.id
 ORDER BY i.ord`;

export class TasksRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  async list(filter: TaskFilter): Promise<Task[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.assigneeId !== undefined) add('assignee_id = ?', filter.assigneeId);
    if (filter.clientId !== undefined) add('client_id = ?', filter.clientId);
    if (filter.status !== undefined) add('status = ?', filter.status);
    if (filter.afterId !== undefined) add('id > ?', filter.afterId);
    params.push(filter.limit);
    const rows = await this.db.query<TaskRow>(
      `SELECT ${COLUMNS} FROM tasks ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT $${params.length}`,
      params,
    );
    return rows.map(toTask);
  }

  /** Up to `limit` tasks matching `search` in its order, after `after` (docs/rules.md#finding-tasks). */
  search(search: TaskSearch, after: TaskPosition | undefined, limit: number): Promise<FoundTask[]> {
    return findTasks(this.db, search, after, limit);
  }

  async find(id: number): Promise<Task | null> {
    const [row] = await this.db.query<TaskRow>(`SELECT ${COLUMNS} FROM tasks WHERE id = $1`, [id]);
    return row ? toTask(row) : null;
  }

  /**
   * Reassigns `taskIds` to `assigneeId` in one statement, atomic on its own, history included.
   * With `alongside` (an Idempotency-Key's answer to store), the statement and that work share one
   * transaction instead.
   */
  async bulkReassign(
    taskIds: readonly number[],
    assigneeId: number,
    change: BulkChange = {},
  ): Promise<BulkOutcome> {
    const { alongside } = change;
    if (!alongside) return reassign(this.db, taskIds, assigneeId, change);
    return this.db.transaction(async (connection) => {
      const outcome = await reassign(connection, taskIds, assigneeId, change);
      if (outcome.kind === 'done') await alongside(outcome, connection);
      return outcome;
    });
  }
}

async function reassign(
  db: Queryable,
  taskIds: readonly number[],
  assigneeId: number,
  change: BulkChange,
): Promise<BulkOutcome> {
  const rows = await db.query<{ id: number; first: boolean; updated: boolean; assignee_ok: boolean }>(
    BULK_REASSIGN_SQL,
    [taskIds, assigneeId, change.atMs ?? null, change.actorId ?? null],
  );
  if (rows.length > 0 && !rows[0]!.assignee_ok) return { kind: 'assignee-not-found' };
  return {
    kind: 'done',
    results: rows.map((row) => ({
      taskId: row.id,
      outcome: !row.first ? 'DUPLICATE' : row.updated ? 'reassigned' : 'NOT_FOUND',
    })),
  };
}
