// A task's row as every task statement reads it: its columns, and the Task the API answers.
import type { Task, TaskPriority, TaskStatus } from '../../domain.ts';

export interface TaskRow {
  id: number;
  client_id: number;
  title: string;
  description: string;
  status: TaskStatus;
  priority: TaskPriority;
  due_date: string | null;
  assignee_id: number | null;
  created_at: Date | string;
  created_by: number | null;
  updated_at: Date | string;
  version: number;
}

/**
 * A task's columns as TaskRow reads them. The due date comes as text: a driver turns a `date`
 * into a Date at local midnight, which is another day in another time zone.
 */
export const TASK_COLUMNS =
  'id, client_id, title, description, status, priority, due_date::text AS due_date, assignee_id, created_at, created_by, updated_at, version';

export const toTask = (row: TaskRow): Task => ({
  id: row.id,
  clientId: row.client_id,
  title: row.title,
  description: row.description,
  status: row.status,
  priority: row.priority,
  dueDate: row.due_date,
  assigneeId: row.assignee_id,
  createdAt: new Date(row.created_at).toISOString(),
  createdBy: row.created_by,
  updatedAt: new Date(row.updated_at).toISOString(),
  version: row.version,
});
