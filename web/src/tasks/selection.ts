// Which tasks are selected: a set of ids that never holds more than one bulk request's worth.
import { BULK_MAX_TASKS } from '../../../src/client/index.ts';

export const MAX_SELECTED = BULK_MAX_TASKS;

/** The header checkbox: checked when the page is selected as far as the limit allows. */
export function headerState(selected: ReadonlySet<number>, pageIds: readonly number[]) {
  const onPage = pageIds.filter((id) => selected.has(id)).length;
  const full = onPage === pageIds.length || (selected.size >= MAX_SELECTED && onPage > 0);
  const checked = pageIds.length > 0 && full;
  return { checked, indeterminate: onPage > 0 && !checked };
}

/** Selects the page's tasks in order until the limit; `capped` when some had to be left out. */
export function selectPage(selected: ReadonlySet<number>, pageIds: readonly number[]) {
  const next = new Set(selected);
  let capped = false;
  for (const id of pageIds) {
    if (next.has(id)) continue;
    if (next.size >= MAX_SELECTED) {
      capped = true;
      break;
    }
    next.add(id);
  }
  return { next, capped };
}

export function unselectPage(selected: ReadonlySet<number>, pageIds: readonly number[]): Set<number> {
  const next = new Set(selected);
  for (const id of pageIds) next.delete(id);
  return next;
}
