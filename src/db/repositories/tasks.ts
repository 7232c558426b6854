// Tasks: filtered keyset pagination, one task, and bulk reassignment in one SQL statement.
import type { TaskStatus } from '../../domain.ts';
import type { Database, Queryable } from '../database.ts';
import { maySignInSql } from './users.ts';

export interface Task {
  id: number;
  clientId: number;
  title: string;
  status: TaskStatus;
  assigneeId: number | null;
  updatedAt: string;
}

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

interface TaskRow {
  id: number;
  client_id: number;
  title: string;
  status: TaskStatus;
  assignee_id: number | null;
  updated_at: Date | string;
}

const COLUMNS = 'id, client_id, title, status, assignee_id, updated_at';

const toTask = (row: TaskRow): Task => ({
  id: row.id,
  clientId: row.client_id,
  title: row.title,
  status: row.status,
  assigneeId: row.assignee_id,
  updatedAt: new Date(row.updated_at).toISOString(),
});

/*
 * Bulk reassignment as one statement, hence one round trip and one atomic change: number the
 * input, keep the first occurrence of each id, update those tasks only when the assignee is an
 * existing employee who may sign in (a disabled account is no target), and report every input position in order.
 */
const BULK_REASSIGN_SQL = `
WITH input AS (
  SELECT id, ord FROM unnest($1::int[]) WITH ORDINALITY AS t(id, ord)
), firsts AS (
  SELECT id, min(ord) AS ord FROM input GROUP BY id
), assignee AS (
  SELECT id FROM users u WHERE id = $2 AND role = 'employee' AND ${maySignInSql('u')}
), updated AS (
  UPDATE tasks SET assignee_id = $2, updated_at = now()
   WHERE id IN (SELECT id FROM firsts) AND EXISTS (SELECT 1 FROM assignee)
  RETURNING id
)
SELECT i.id, (f.ord = i.ord) AS first, (u.id IS NOT NULL) AS updated,
       EXISTS (SELECT 1 FROM assignee) AS assignee_ok
  FROM input i
  JOIN firsts f ON f.id = i.id
  LEFT JOIN updated u ON u.id = i.id
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

  async find(id: number): Promise<Task | null> {
    const [row] = await this.db.query<TaskRow>(`SELECT ${COLUMNS} FROM tasks WHERE id = $1`, [id]);
    return row ? toTask(row) : null;
  }

  /**
   * Reassigns `taskIds` to `assigneeId` in one statement, atomic on its own. With `alongside` (an
   * Idempotency-Key's answer to store), the statement and that work share one transaction instead.
   */
  async bulkReassign(
    taskIds: readonly number[],
    assigneeId: number,
    alongside?: AlongsideReassignment,
  ): Promise<BulkOutcome> {
    if (!alongside) return reassign(this.db, taskIds, assigneeId);
    return this.db.transaction(async (connection) => {
      const outcome = await reassign(connection, taskIds, assigneeId);
      if (outcome.kind === 'done') await alongside(outcome, connection);
      return outcome;
    });
  }
}

async function reassign(db: Queryable, taskIds: readonly number[], assigneeId: number): Promise<BulkOutcome> {
  const rows = await db.query<{ id: number; first: boolean; updated: boolean; assignee_ok: boolean }>(
    BULK_REASSIGN_SQL,
    [taskIds, assigneeId],
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
