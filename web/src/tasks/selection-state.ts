// The selection as the page shows it: the selected ids and the note that says why one was refused.
import { headerState, MAX_SELECTED, selectPage, unselectPage } from './selection.ts';

export interface SelectionState {
  readonly selected: ReadonlySet<number>;
  /** Why the last change did less than asked (the limit), or null. */
  readonly note: string | null;
}

export const NO_SELECTION: SelectionState = { selected: new Set(), note: null };

/**
 * Selects or unselects one task. Selecting past the limit is `refused`: the state keeps the
 * selection and says why, and the checkbox click should be cancelled.
 */
export function toggleTask(state: SelectionState, id: number): { state: SelectionState; refused: boolean } {
  const next = new Set(state.selected);
  if (next.has(id)) {
    next.delete(id);
  } else if (next.size >= MAX_SELECTED) {
    const note = `A reassignment takes at most ${MAX_SELECTED} tasks: unselect one before selecting another.`;
    return { state: { selected: state.selected, note }, refused: true };
  } else {
    next.add(id);
  }
  return { state: { selected: next, note: null }, refused: false };
}

/** The header checkbox: unselects the page when it reads as checked, else selects it up to the limit. */
export function togglePage(state: SelectionState, pageIds: readonly number[]): SelectionState {
  if (headerState(state.selected, pageIds).checked)
    return { selected: unselectPage(state.selected, pageIds), note: null };
  const { next, capped } = selectPage(state.selected, pageIds);
  const note = capped
    ? `A reassignment takes at most ${MAX_SELECTED} tasks, so only ${MAX_SELECTED} are selected, not all ${pageIds.length} on this page.`
    : null;
  return { selected: next, note };
}
