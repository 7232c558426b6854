// Where the task list is: the applied filters and the cursor of every page up to the current one.
import type { TaskFilters } from '../../../src/client/index.ts';

/** The filters a page applies: all of the query but the cursor, which the position keeps. */
export type PageFilters = Omit<TaskFilters, 'cursor'>;

export interface Position<F extends PageFilters = PageFilters> {
  readonly filters: F;
  /** The cursor of each page shown so far, the first page's being undefined: Previous drops one. */
  readonly cursors: readonly (string | undefined)[];
}

/** New filters start again from the first page. */
export const firstPage = <F extends PageFilters>(filters: F): Position<F> => ({
  filters,
  cursors: [undefined],
});

export const nextPage = <F extends PageFilters>(position: Position<F>, cursor: string): Position<F> => ({
  ...position,
  cursors: [...position.cursors, cursor],
});

/** One page back; the first page stays where it is. */
export const previousPage = <F extends PageFilters>(position: Position<F>): Position<F> =>
  position.cursors.length > 1 ? { ...position, cursors: position.cursors.slice(0, -1) } : position;

/** The same place as a new value: what makes the list load again. */
export const reloaded = <F extends PageFilters>(position: Position<F>): Position<F> => ({ ...position });

/** 1 for the first page. */
export const pageNumber = (position: Position): number => position.cursors.length;

/** The query for the page to show: the filters and the current page's cursor. */
export const pageQuery = ({ filters, cursors }: Position): TaskFilters => ({
  ...filters,
  cursor: cursors[cursors.length - 1],
});

/** What the person does to the list's place. */
export type PageMove<F extends PageFilters = PageFilters> =
  | { readonly type: 'filters-applied'; readonly filters: F }
  | { readonly type: 'next'; readonly cursor: string }
  | { readonly type: 'previous' }
  | { readonly type: 'reload' };

/** The list's place after a move (the reducer of useTaskPages): new filters start again from page 1. */
export function pagesReducer<F extends PageFilters>(position: Position<F>, move: PageMove<F>): Position<F> {
  switch (move.type) {
    case 'filters-applied':
      return firstPage(move.filters);
    case 'next':
      return nextPage(position, move.cursor);
    case 'previous':
      return previousPage(position);
    case 'reload':
      return reloaded(position);
  }
}
