// A task's form as plain functions: what the person changed, what someone else changed, and the rebase after
// a 412.
import {
  ApiError,
  type HistoryEntry,
  type NewTask,
  type Task,
  type TaskFields,
  type TaskPriority,
  type TaskStatus,
  WRITABLE_FIELDS,
} from '../../../src/client/index.ts';

export type EditedField = (typeof WRITABLE_FIELDS)[number];
/** The fields a person edits, in the order the form shows them: history's order, the client last. */
export const EDITED_FIELDS: readonly EditedField[] = [
  ...WRITABLE_FIELDS.filter((field) => field !== 'clientId'),
  'clientId',
];

/** The form's values as its controls hold them: text, '' for "none" (no due date, unassigned). */
export type Draft = Readonly<Record<EditedField, string>>;

/** The form's values for `task`. */
export function draftOf(task: Task): Draft {
  return {
    title: task.title,
    description: task.description,
    status: task.status,
    priority: task.priority,
    dueDate: task.dueDate ?? '',
    assigneeId: task.assigneeId === null ? '' : String(task.assigneeId),
    clientId: String(task.clientId),
  };
}

/** An empty New task form. */
export const NEW_DRAFT: Draft = {
  title: '',
  description: '',
  status: 'open',
  priority: 'normal',
  dueDate: '',
  assigneeId: '',
  clientId: '',
};

/** One field's form value as the API takes it. */
function apiValue(field: EditedField, text: string): TaskFields[EditedField] {
  switch (field) {
    case 'dueDate':
      return text === '' ? null : text;
    case 'assigneeId':
      return text === '' ? null : Number(text);
    case 'clientId':
      return Number(text);
    case 'status':
      return text as TaskStatus;
    case 'priority':
      return text as TaskPriority;
    default:
      return text;
  }
}

/** The fields of `draft` that differ from `loaded`: what a save sends, and nothing else. */
export function changedFields(loaded: Task, draft: Draft): TaskFields {
  const before = draftOf(loaded);
  const fields: Record<string, unknown> = {};
  for (const field of EDITED_FIELDS)
    if (draft[field] !== before[field]) fields[field] = apiValue(field, draft[field]);
  return fields as TaskFields;
}

/** What a create sends: the title and client, and the other fields the person set. */
export function newTaskBody(draft: Draft): NewTask {
  const body: Record<string, unknown> = { clientId: Number(draft.clientId), title: draft.title };
  for (const field of EDITED_FIELDS) {
    if (field === 'title' || field === 'clientId') continue;
    if (draft[field] !== NEW_DRAFT[field]) body[field] = apiValue(field, draft[field]);
  }
  return body as unknown as NewTask;
}

/** A field someone changed: its value before and after. */
export interface FieldChange {
  readonly field: EditedField;
  readonly from: unknown;
  readonly to: unknown;
}

/** The fields that differ between the version the person loaded and the one the server holds now. */
export function differences(loaded: Task, current: Task): FieldChange[] {
  return EDITED_FIELDS.filter((field) => loaded[field] !== current[field]).map((field) => ({
    field,
    from: loaded[field],
    to: current[field],
  }));
}

/**
 * After a 412: the form rebased on the version the server holds now. Fields the person changed keep
 * what they typed; the others take the new values, so that saving again sends only the person's
 * changes and the other person's survive.
 */
export function rebase(loaded: Task, draft: Draft, current: Task): Draft {
  const before = draftOf(loaded);
  const now = draftOf(current);
  const rebased: Record<string, string> = {};
  for (const field of EDITED_FIELDS)
    rebased[field] = draft[field] !== before[field] ? draft[field] : now[field];
  return rebased as Draft;
}

/** Fields both people changed, to different values: the person's value replaces the other's when applied. */
export function clashes(loaded: Task, draft: Draft, current: Task): EditedField[] {
  const before = draftOf(loaded);
  const now = draftOf(current);
  return EDITED_FIELDS.filter(
    (field) => draft[field] !== before[field] && now[field] !== before[field] && draft[field] !== now[field],
  );
}

/**
 * The history entries made since the version the person loaded: each change makes one version and
 * one entry (docs/rules.md#tasks), so they are the newest `current.version - loaded.version`.
 */
export function entriesSince(
  loaded: Task,
  current: Task,
  entries: readonly HistoryEntry[],
): readonly HistoryEntry[] {
  return entries.slice(0, Math.max(0, current.version - loaded.version));
}

/**
 * The ETag of the task a 412 TASK_CHANGED answers with: `"v<version>"` (docs/rules.md#tasks), the
 * tag the answer's own ETag header carries.
 */
export function etagOf(task: Task): string {
  return `"v${task.version}"`;
}

/** The task a 412 TASK_CHANGED carries, when the error is one. */
export function changedTask(error: unknown): Task | null {
  if (!(error instanceof ApiError) || error.code !== 'TASK_CHANGED') return null;
  const task = error.body.task;
  return task && typeof task === 'object' ? (task as Task) : null;
}

/** The field a 400 VALIDATION_ERROR names (`errors[].path` = `body/dueDate`), or null. */
export function refusedField(error: unknown): EditedField | null {
  if (!(error instanceof ApiError)) return null;
  if (error.code === 'CLIENT_NOT_FOUND') return 'clientId';
  if (error.code === 'ASSIGNEE_NOT_FOUND') return 'assigneeId';
  if (error.code !== 'VALIDATION_ERROR' || !Array.isArray(error.body.errors)) return null;
  for (const item of error.body.errors as { path?: unknown }[]) {
    const field = typeof item?.path === 'string' ? item.path.replace(/^\/?body\//, '') : '';
    if ((EDITED_FIELDS as readonly string[]).includes(field)) return field as EditedField;
  }
  return null;
}

/** Today's date where the person is, as YYYY-MM-DD: a due date is a day on their calendar. */
export function localToday(now: Date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** A task not done whose due date has passed. */
export function isOverdue(task: Pick<Task, 'status' | 'dueDate'>, today: string): boolean {
  return task.status !== 'done' && task.dueDate !== null && task.dueDate < today;
}
