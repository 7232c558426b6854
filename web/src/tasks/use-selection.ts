// The selected tasks, capped at one bulk request, with the note that says why a selection was refused.
import { useState } from 'preact/hooks';
import { NO_SELECTION, togglePage, toggleTask } from './selection-state.ts';

export function useSelection() {
  const [state, setState] = useState(NO_SELECTION);
  return {
    selected: state.selected,
    note: state.note,
    /** Returns false when the task could not be selected (the limit): cancel the click then. */
    toggle: (id: number): boolean => {
      const { state: next, refused } = toggleTask(state, id);
      setState(next);
      return !refused;
    },
    togglePage: (pageIds: readonly number[]) => setState(togglePage(state, pageIds)),
    clear: () => setState(NO_SELECTION),
  };
}
