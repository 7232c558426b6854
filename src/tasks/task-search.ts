// Finding tasks (docs/rules.md#finding-tasks): the list's filters and sorts, the words of `q`, and cursors bound to both.
import { createHash } from 'node:crypto';
import {
  TASK_PRIORITIES,
  TASK_SORTS,
  TASK_STATUSES,
  type TaskPosition,
  type TaskPriority,
  type TaskSearch,
  type TaskSort,
  type TaskStatus,
} from '../domain.ts';
import { ApiError } from '../errors.ts';
import { isCalendarDate } from './task-rules.ts';

export const Q_MAX_LENGTH = 200;
/** The largest id a query may name: PostgreSQL's integer. */
const ID_MAX = 2_147_483_647;

/** The list's query string as the schema lets it through (one or several values where repeats are allowed). */
export interface TaskListQuery {
  q?: string;
  assigneeId?: string;
  clientId?: number;
  status?: TaskStatus | TaskStatus[];
  priority?: TaskPriority | TaskPriority[];
  dueBefore?: string;
  sort?: TaskSort;
  cursor?: string;
}

/** A 400 VALIDATION_ERROR naming the query parameter, as a schema violation is answered. */
export function queryError(parameter: string, problem: string): ApiError {
  return new ApiError(
    'VALIDATION_ERROR',
    { errors: [{ path: `querystring/${parameter}`, message: problem }] },
    `Invalid request: querystring/${parameter} ${problem}.`,
  );
}

const list = <T>(value: T | T[] | undefined): T[] | undefined =>
  value === undefined ? undefined : [...new Set(Array.isArray(value) ? value : [value])].sort();

/** The query string → a search, or a 400 naming the first parameter that is wrong. */
export function searchOf(query: TaskListQuery): TaskSearch {
  const search: TaskSearch = { words: [], sort: query.sort ?? 'id' };
  if (query.q !== undefined) {
    search.words = wordsOf(query.q);
    if (search.words.length === 0) throw queryError('q', 'must contain a letter or a digit');
  }
  if (query.assigneeId !== undefined) {
    if (query.assigneeId === 'none') search.assigneeId = 'none';
    else {
      const id = /^[1-9]\d{0,9}$/.test(query.assigneeId) ? Number(query.assigneeId) : Number.NaN;
      if (!(id <= ID_MAX)) throw queryError('assigneeId', 'must be a user id or "none"');
      search.assigneeId = id;
    }
  }
  if (query.clientId !== undefined) search.clientId = query.clientId;
  const statuses = list(query.status);
  if (statuses) search.statuses = statuses;
  const priorities = list(query.priority);
  if (priorities) search.priorities = priorities;
  if (query.dueBefore !== undefined) {
    if (!isCalendarDate(query.dueBefore))
      throw queryError('dueBefore', 'must be a calendar date that exists, as YYYY-MM-DD');
    search.dueBefore = query.dueBefore;
  }
  return search;
}

/**
 * The words of `q`: runs of letters and digits, lower case. Nothing else reaches the text-search
 * query, so no operator of its syntax can be written through `q`.
 */
export function wordsOf(q: string): string[] {
  return [
    ...new Set(
      q
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter((word) => word.length > 0),
    ),
  ];
}

/** A short fingerprint of what a search looks for and how it sorts: a cursor carries it. */
function fingerprint(search: TaskSearch): string {
  const canonical = JSON.stringify([
    search.words,
    search.assigneeId ?? null,
    search.clientId ?? null,
    search.statuses ?? null,
    search.priorities ?? null,
    search.dueBefore ?? null,
    search.sort,
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 12);
}

export function encodeCursor(search: TaskSearch, position: TaskPosition): string {
  const { value, id, mark } = position;
  return Buffer.from(JSON.stringify([fingerprint(search), value, id, mark])).toString('base64url');
}

/** The shape of each sort's value in a cursor: what a query can take without failing. */
const VALUE_FORM: Readonly<Record<TaskSort, RegExp | null>> = {
  id: null,
  '-updatedAt': /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2}){0,2}$/,
  dueDate: /^(\d{4}-\d{2}-\d{2}|infinity)$/,
  '-priority': /^[0-3]$/,
};

/**
 * The position a cursor carries, for this very search: a cursor this API did not issue, or issued
 * for another filter or sort, is a 400 naming `cursor`.
 */
export function decodeCursor(search: TaskSearch, cursor: string): TaskPosition {
  const wrong = () => queryError('cursor', 'is not one this API issued for this filter and sort');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw wrong();
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw wrong();
  const [print, value, id, mark] = parsed as unknown[];
  if (print !== fingerprint(search)) throw wrong();
  if (!Number.isSafeInteger(id) || (id as number) < 0 || (id as number) > ID_MAX) throw wrong();
  if (typeof mark !== 'string' || !/^\d{1,18}$/.test(mark)) throw wrong();
  const form = VALUE_FORM[search.sort];
  if (form === null ? value !== null : typeof value !== 'string' || !form.test(value)) throw wrong();
  if (search.sort === 'dueDate' && value !== 'infinity' && !isCalendarDate(value as string)) throw wrong();
  if (search.sort === '-updatedAt' && !isTimestamp(value as string)) throw wrong();
  return { value: value as string | null, id: id as number, mark };
}

/** A timestamp as PostgreSQL writes one, naming a day and a time that exist. */
function isTimestamp(text: string): boolean {
  const [day, time] = text.split(' ') as [string, string];
  const [hours, minutes, seconds] = time.split(':').map((part) => Number.parseFloat(part));
  return isCalendarDate(day) && hours! < 24 && minutes! < 60 && seconds! < 60;
}

export { TASK_PRIORITIES, TASK_STATUSES };

const oneOrSeveral = <T extends readonly string[]>(values: T, description: string) => ({
  description,
  anyOf: [
    { type: 'string', enum: values },
    { type: 'array', items: { type: 'string', enum: values }, minItems: 1, maxItems: values.length * 2 },
  ],
});

/** The query parameters the list and the export share (the list adds `limit`). */
export const taskSearchQuerySchema = {
  q: {
    type: 'string',
    minLength: 1,
    maxLength: Q_MAX_LENGTH,
    description: 'Words that must each start a word of the title or the description, ignoring case.',
  },
  assigneeId: {
    type: 'string',
    pattern: '^(none|[1-9][0-9]{0,9})$',
    description: 'A user id, or "none" for tasks nobody is assigned.',
  },
  clientId: { type: 'integer', minimum: 1, maximum: ID_MAX },
  status: oneOrSeveral(TASK_STATUSES, 'One status, or several (repeat the parameter).'),
  priority: oneOrSeveral(TASK_PRIORITIES, 'One priority, or several (repeat the parameter).'),
  dueBefore: {
    type: 'string',
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
    description: 'Tasks due on or before this day (YYYY-MM-DD).',
  },
  sort: {
    type: 'string',
    enum: TASK_SORTS,
    default: 'id',
    description:
      'id (default), -updatedAt (latest change first), dueDate (no due date last), -priority (most urgent first).',
  },
  cursor: {
    type: 'string',
    maxLength: 512,
    description: 'nextCursor of the previous page, with the same filters and sort.',
  },
} as const;
