// What the task form, a task's view and its history say: field names, values in words, refusals.
import {
  ApiError,
  type HistorySource,
  type ImportRowError,
  type TaskPriority,
  type TaskSort,
} from '../../../src/client/index.ts';
import { describeError, duration, STATUS_LABELS } from '../shared/wording.ts';
import type { EditedField } from './task-edit.ts';

export const PRIORITY_LABELS = {
  low: 'Low',
  normal: 'Normal',
  high: 'High',
  urgent: 'Urgent',
} as const satisfies Record<TaskPriority, string>;

export const FIELD_LABELS: Readonly<Record<EditedField, string>> = {
  title: 'Title',
  description: 'Description',
  status: 'Status',
  priority: 'Priority',
  dueDate: 'Due date',
  assigneeId: 'Assignee',
  clientId: 'Client',
};

export const SOURCE_LABELS = {
  create: 'created',
  edit: 'edited',
  bulk: 'reassigned in bulk',
  import: 'imported',
} as const satisfies Record<HistorySource, string>;

/** The word an overdue task is marked with, beside its due date (never colour alone). */
export const OVERDUE = 'Overdue';

/** Names of employees and clients by id, to say values in words. */
export interface Names {
  readonly people: ReadonlyMap<number, string>;
  readonly clients: ReadonlyMap<number, string>;
}

/** A field's value in words: "High", "Bob Nguyen", "no due date", "“Fix the login”". */
export function valueWords(field: string, value: unknown, names: Names): string {
  if (value === null || value === undefined || value === '') {
    if (field === 'dueDate') return 'no due date';
    if (field === 'assigneeId') return 'unassigned';
    if (field === 'description') return 'no description';
    return 'nothing';
  }
  switch (field) {
    case 'status':
      return STATUS_LABELS[value as keyof typeof STATUS_LABELS] ?? String(value);
    case 'priority':
      return PRIORITY_LABELS[value as TaskPriority] ?? String(value);
    case 'assigneeId':
      return names.people.get(Number(value)) ?? `user ${value}`;
    case 'clientId':
      return names.clients.get(Number(value)) ?? `client ${value}`;
    case 'title':
    case 'description': {
      const text = String(value);
      return `“${text.length > 80 ? `${text.slice(0, 79)}…` : text}”`;
    }
    default:
      return String(value);
  }
}

/** "Priority from Normal to High". */
export function changeWords(change: { field: string; from: unknown; to: unknown }, names: Names): string {
  const label = FIELD_LABELS[change.field as EditedField] ?? change.field;
  if (
    change.from === null &&
    change.to !== null &&
    change.field !== 'dueDate' &&
    change.field !== 'assigneeId'
  )
    return `${label}: ${valueWords(change.field, change.to, names)}`;
  return `${label} from ${valueWords(change.field, change.from, names)} to ${valueWords(change.field, change.to, names)}`;
}

/** "28 Nov 2026, 19:40" in the person's own time zone. */
export function when(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A refusal of a task's create or save, in words a person can act on. */
export function describeTaskError(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  switch (code) {
    case 'CLIENT_NOT_FOUND':
      return 'That client no longer exists. Choose another.';
    case 'ASSIGNEE_NOT_FOUND':
      return 'That person can no longer be assigned tasks (an admin or a disabled account). Choose someone else.';
    case 'NOT_FOUND':
      return 'There is no such task.';
    default:
      return describeError(error);
  }
}

/** What a refused field says beside it. */
export const FIELD_PROBLEMS: Readonly<Record<EditedField, string>> = {
  title: 'Give the task a title of 1 to 200 characters, without control characters.',
  description: 'The description can be up to 10,000 characters of plain text.',
  status: 'Choose a status from the list.',
  priority: 'Choose a priority from the list.',
  dueDate: 'Give a date that exists on the calendar, or none.',
  assigneeId:
    'That person can no longer be assigned tasks (an admin or a disabled account). Choose someone else.',
  clientId: 'Choose a client from the list.',
};

/** The list's sorts in words, in the picker's order: the type fails when the client's sorts change. */
export const SORT_LABELS = {
  id: 'Oldest first',
  '-updatedAt': 'Latest change first',
  dueDate: 'Due date, earliest first',
  '-priority': 'Most urgent first',
} as const satisfies Record<TaskSort, string>;

/** What the search box says when its text has no word to look for (docs/rules.md#finding-tasks). */
export const SEARCH_PROBLEM = 'Search for a word: type at least one letter or digit.';

/** "Line 3, column client: …"; a cell past the header's columns has no column to name. */
export function importRowWords(error: ImportRowError): string {
  const where = error.column === '' ? `Line ${error.line}` : `Line ${error.line}, column ${error.column}`;
  return `${where}: ${error.message}`;
}

/** "3 tasks created from tasks.csv." */
export function importedSentence(created: number, file: string): string {
  return `${created} task${created === 1 ? '' : 's'} created from ${file}.`;
}

/**
 * A refused import other than its wrong rows, in words a person can act on
 * (docs/rules.md#export-and-import): a file that is not CSV, too large, or past the import budget.
 */
export function describeImportError(error: unknown): string {
  if (!(error instanceof ApiError)) return describeError(error);
  switch (error.code) {
    case 'VALIDATION_ERROR': {
      const problem = (error.body.errors as { path?: string; message?: string }[] | undefined)?.find(
        (one) => one.path === 'body',
      )?.message;
      return problem
        ? `The file was not imported: it ${problem}.`
        : `The file was not imported: ${error.message}`;
    }
    case 'PAYLOAD_TOO_LARGE':
      // The server's message names the limits of every route; the person needs only what to do.
      return 'The file is too large to import at once. Split it into smaller files and import each of them.';
    case 'TASK_IMPORT_RATE_LIMIT':
      return error.retryAfter === null
        ? 'You have used all your imports for now. Wait a while, then import the file again.'
        : `You have used all your imports for now. You can import again in ${duration(error.retryAfter)}.`;
    case 'IDEMPOTENCY_KEY_IN_FLIGHT':
      return 'Your import is still being processed. Wait a moment, then press Import CSV again.';
    default:
      return describeError(error);
  }
}

/** An import whose answer never came: pressing Import again sends it under the same key. */
export const IMPORT_FATE_UNKNOWN =
  'The connection broke before the server answered, so the tasks may already have been created. ' +
  'Press Import CSV again: the same file is sent as the same request, and the server creates its tasks only once.';
