// The task list's place (web/src/tasks/task-pages.ts): filters, cursors, Previous and Next.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  firstPage,
  type PageMove,
  type Position,
  pageNumber,
  pageQuery,
  pagesReducer,
} from '../../web/src/tasks/task-pages.ts';

describe('task pages', () => {
  const filters = { limit: 25, status: 'open' } as const;
  type Filters = { limit: number; status: 'open' | 'done' };
  /** The place after the moves, as useTaskPages' reducer makes it from page 1 of `filters`. */
  const after = (...moves: PageMove<Filters>[]): Position<Filters> =>
    moves.reduce(pagesReducer<Filters>, firstPage<Filters>(filters));

  it('starts on page 1 of the filters, with no cursor', () => {
    const position = after();
    assert.equal(pageNumber(position), 1);
    assert.deepEqual(pageQuery(position), { limit: 25, status: 'open', cursor: undefined });
  });

  it('asks for the next page by its cursor, and goes back by dropping it', () => {
    const second = after({ type: 'next', cursor: 'c2' });
    const third = pagesReducer(second, { type: 'next', cursor: 'c3' });
    assert.equal(pageNumber(third), 3);
    assert.equal(pageQuery(third).cursor, 'c3');
    assert.deepEqual(pagesReducer(third, { type: 'previous' }), second);
    assert.equal(pageQuery(pagesReducer(second, { type: 'previous' })).cursor, undefined);
  });

  it('stays on page 1 when asked for the page before it', () => {
    const first = after();
    assert.equal(pagesReducer(first, { type: 'previous' }), first);
  });

  it('starts again from page 1 when the filters change', () => {
    const third = after({ type: 'next', cursor: 'c2' }, { type: 'next', cursor: 'c3' });
    const changed = pagesReducer(third, { type: 'filters-applied', filters: { limit: 25, status: 'done' } });
    assert.equal(pageNumber(changed), 1);
    assert.deepEqual(pageQuery(changed), { limit: 25, status: 'done', cursor: undefined });
    // Next from there follows the new filters' cursors only.
    const next = pagesReducer(changed, { type: 'next', cursor: 'd2' });
    assert.deepEqual(pageQuery(next), { limit: 25, status: 'done', cursor: 'd2' });
    assert.deepEqual(pagesReducer(next, { type: 'previous' }), changed);
  });

  it('starts again from page 1, and loads it, when the same filters are applied again', () => {
    const third = after({ type: 'next', cursor: 'c2' }, { type: 'next', cursor: 'c3' });
    const again = pagesReducer(third, { type: 'filters-applied', filters });
    assert.deepEqual(pageQuery(again), { limit: 25, status: 'open', cursor: undefined });
    const first = after();
    const reapplied = pagesReducer(first, { type: 'filters-applied', filters });
    assert.notEqual(reapplied, first, 'a new value, which is what makes the list load again');
  });

  it('reloads as a new value at the same place, which is what makes the list load again', () => {
    const position = after({ type: 'next', cursor: 'c2' });
    const again = pagesReducer(position, { type: 'reload' });
    assert.notEqual(again, position);
    assert.deepEqual(again, position);
  });
});
