// A task's fields as the API names them: the values each may take and their bounds (docs/rules.md#tasks).

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
