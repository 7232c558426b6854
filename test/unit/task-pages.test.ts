// The task list's place (web/src/task-pages.ts): filters, cursors, Previous and Next, and the query they make.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  firstPage,
  nextPage,
  pageNumber,
  pageQuery,
  previousPage,
  reloaded,
} from '../../web/src/task-pages.ts';

describe('task pages', () => {
  const filters = { limit: 25, status: 'open' } as const;

  it('starts on page 1 of the filters, with no cursor', () => {
    const position = firstPage(filters);
    assert.equal(pageNumber(position), 1);
    assert.deepEqual(pageQuery(position), { limit: 25, status: 'open', cursor: undefined });
  });

  it('asks for the next page by its cursor, and goes back by dropping it', () => {
    const second = nextPage(firstPage(filters), 'c2');
    const third = nextPage(second, 'c3');
    assert.equal(pageNumber(third), 3);
    assert.equal(pageQuery(third).cursor, 'c3');
    assert.deepEqual(previousPage(third), second);
    assert.equal(pageQuery(previousPage(second)).cursor, undefined);
  });

  it('stays on page 1 when asked for the page before it', () => {
    const first = firstPage(filters);
    assert.equal(previousPage(first), first);
  });

  it('starts again from page 1 when the filters change', () => {
    const deep = nextPage(nextPage(firstPage(filters), 'c2'), 'c3');
    const changed = firstPage({ ...deep.filters, status: 'done' as const });
    assert.equal(pageNumber(changed), 1);
    assert.equal(pageQuery(changed).status, 'done');
  });

  it('reloads as a new value at the same place, which is what makes the list load again', () => {
    const position = nextPage(firstPage(filters), 'c2');
    const again = reloaded(position);
    assert.notEqual(again, position);
    assert.deepEqual(again, position);
  });
});
