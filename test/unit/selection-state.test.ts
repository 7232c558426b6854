// The selection with its note (web/src/tasks/selection-state.ts): one task, the page, the limit of 50.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BULK_MAX_TASKS } from '../../src/client/index.ts';
import {
  NO_SELECTION,
  type SelectionState,
  togglePage,
  toggleTask,
} from '../../web/src/tasks/selection-state.ts';

const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
const holding = (selected: readonly number[]): SelectionState => ({
  selected: new Set(selected),
  note: null,
});

describe('selection state', () => {
  it('selects and unselects one task', () => {
    const one = toggleTask(NO_SELECTION, 7);
    assert.deepEqual([...one.state.selected], [7]);
    assert.equal(one.refused, false);
    assert.deepEqual([...toggleTask(one.state, 7).state.selected], []);
  });

  it('refuses the task past the limit, keeps the selection and says why; unselecting clears the note', () => {
    const full = holding(ids(1, BULK_MAX_TASKS));
    const { state, refused } = toggleTask(full, 999);
    assert.equal(refused, true);
    assert.equal(state.selected, full.selected);
    assert.match(state.note ?? '', /at most 50 tasks: unselect one/);
    const fewer = toggleTask(state, 1);
    assert.equal(fewer.refused, false);
    assert.equal(fewer.state.selected.size, BULK_MAX_TASKS - 1);
    assert.equal(fewer.state.note, null);
  });

  it('selects a whole page, and unselects it when the header reads as checked', () => {
    const page = ids(1, 25);
    const selected = togglePage(NO_SELECTION, page);
    assert.deepEqual([...selected.selected], page);
    assert.equal(selected.note, null);
    assert.deepEqual(togglePage(selected, page), NO_SELECTION);
  });

  it('stops a page of 100 at the limit and says so', () => {
    const { selected, note } = togglePage(NO_SELECTION, ids(1, 100));
    assert.deepEqual([...selected], ids(1, BULK_MAX_TASKS));
    assert.equal(
      note,
      'A reassignment takes at most 50 tasks, so only 50 are selected, not all 100 on this page.',
    );
  });

  it('keeps what other pages selected when selecting this one', () => {
    const { selected, note } = togglePage(holding([500, 501]), ids(1, 10));
    assert.deepEqual([...selected], [500, 501, ...ids(1, 10)]);
    assert.equal(note, null);
  });
});
