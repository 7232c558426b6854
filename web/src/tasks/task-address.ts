// The Tasks page's search in its address (`?q=invoice&sort=dueDate#tasks`): bookmarked, shared, kept by a
// reload.
import { TASK_STATUSES, type TaskSort, type TaskStatus } from '../../../src/client/index.ts';
import { SORT_LABELS } from './task-wording.ts';

/** What the list applies: the search, the filters, the sort and the page size. */
export interface Filters {
  readonly q?: string;
  readonly clientId?: number;
  readonly assigneeId?: number;
  readonly status?: TaskStatus;
  readonly sort?: TaskSort;
  readonly limit: number;
}

export const PAGE_SIZES = [25, 50, 100, 200] as const;

export const DEFAULT_FILTERS: Filters = { limit: 50 };

/** The longest search the list takes (docs/rules.md#finding-tasks). */
export const SEARCH_MAX_LENGTH = 200;

/** Whether `q` has a word to look for: the list refuses one without a letter or a digit. */
export const hasSearchWord = (q: string): boolean => /[\p{L}\p{N}]/u.test(q);

const SORTS = Object.keys(SORT_LABELS) as TaskSort[];

/** A database id as the address writes it: 1 to 2^31 - 1, in plain digits. */
function idOf(value: string | null): number | undefined {
  if (value === null || !/^[1-9]\d{0,9}$/.test(value)) return undefined;
  const id = Number(value);
  return id <= 2_147_483_647 ? id : undefined;
}

function oneOf<T extends string | number>(choices: readonly T[], value: string | null): T | undefined {
  return choices.find((choice) => String(choice) === value);
}

/**
 * The filters an address's query string asks for. A value the list would refuse (an unknown sort,
 * a page size the picker lacks, a search without a word) is left out, never an error: the rest hold.
 */
export function filtersFromAddress(search: string): Filters {
  const params = new URLSearchParams(search);
  const q = params.get('q')?.trim();
  return {
    q: q && q.length <= SEARCH_MAX_LENGTH && hasSearchWord(q) ? q : undefined,
    clientId: idOf(params.get('clientId')),
    assigneeId: idOf(params.get('assigneeId')),
    status: oneOf(TASK_STATUSES, params.get('status')),
    sort: oneOf(SORTS, params.get('sort')),
    limit: oneOf(PAGE_SIZES, params.get('limit')) ?? DEFAULT_FILTERS.limit,
  };
}

/** The query string that asks for `filters` ('' for the defaults), in a fixed order, defaults left out. */
export function addressQuery(filters: Filters): string {
  const params = new URLSearchParams();
  if (filters.q !== undefined) params.set('q', filters.q);
  if (filters.clientId !== undefined) params.set('clientId', String(filters.clientId));
  if (filters.assigneeId !== undefined) params.set('assigneeId', String(filters.assigneeId));
  if (filters.status !== undefined) params.set('status', filters.status);
  if (filters.sort !== undefined && filters.sort !== 'id') params.set('sort', filters.sort);
  if (filters.limit !== DEFAULT_FILTERS.limit) params.set('limit', String(filters.limit));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * Writes the applied filters into the page's address, keeping its path and hash (the view). Replaced,
 * not pushed: Back leaves the page as before instead of stepping through every search.
 */
export function keepInAddress(filters: Filters): void {
  const query = addressQuery(filters);
  if (query === location.search) return;
  history.replaceState(history.state, '', `${location.pathname}${query}${location.hash}`);
}
