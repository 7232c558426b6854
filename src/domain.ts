// The portal's own words, beneath every layer: roles, a task's fields and statuses, what a task search is.

export type Role = 'employee' | 'admin';

export const ROLES: readonly Role[] = ['employee', 'admin'];

/** Every task status, in the order people read them; the schemas, the seed and the client follow this list. */
export const TASK_STATUSES = ['open', 'in_progress', 'done'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Every priority, lowest first. */
export const TASK_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

/** Where a change of a task came from, as its history entry says. */
export const HISTORY_SOURCES = ['create', 'edit', 'bulk', 'import'] as const;
export type HistorySource = (typeof HISTORY_SOURCES)[number];

export const TITLE_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 10_000;
export const CLIENT_NAME_MAX_LENGTH = 200;
/** History entries per page. */
export const HISTORY_PAGE_SIZE = 50;

export interface Task {
  id: number;
  clientId: number;
  title: string;
  description: string;
  status: TaskStatus;
  priority: TaskPriority;
  /** A calendar date, YYYY-MM-DD, or null. */
  dueDate: string | null;
  assigneeId: number | null;
  createdAt: string;
  createdBy: number | null;
  updatedAt: string;
  version: number;
}

/** The fields a person may set: on create (with clientId and title required) and on edit. */
export interface WritableFields {
  clientId?: number;
  title?: string;
  description?: string;
  status?: TaskStatus;
  priority?: TaskPriority;
  dueDate?: string | null;
  assigneeId?: number | null;
}

/** The writable fields in the order history lists them. */
export const WRITABLE_FIELDS = [
  'clientId',
  'title',
  'description',
  'status',
  'priority',
  'dueDate',
  'assigneeId',
] as const satisfies readonly (keyof WritableFields)[];

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export interface HistoryEntry {
  id: number;
  at: string;
  actor: { id: number; name: string } | null;
  source: HistorySource;
  changes: FieldChange[];
}

/** The list's sorts (docs/rules.md#finding-tasks). */
export const TASK_SORTS = ['id', '-updatedAt', 'dueDate', '-priority'] as const;
export type TaskSort = (typeof TASK_SORTS)[number];

/** What a list or an export looks for, in its normal form. */
export interface TaskSearch {
  /** Every word must start a word of the title or the description (lower case, letters and digits only). */
  words: string[];
  assigneeId?: number | 'none';
  clientId?: number;
  statuses?: TaskStatus[];
  priorities?: TaskPriority[];
  /** YYYY-MM-DD: tasks due on or before it. */
  dueBefore?: string;
  sort: TaskSort;
}

/**
 * Where the previous page ended: the last task's sort value (text; null for `id`) and id, and the
 * change number the walk started at (tasks changed since are left out: they may have moved
 * behind the walk, and a walk never shows a task twice).
 */
export interface TaskPosition {
  value: string | null;
  id: number;
  mark: string;
}
