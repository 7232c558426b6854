// The bulk budget as the page knows it: the last state reported, and until when reassigning is paused.
import type { ControlReport, RateLimitState } from '../../../src/client/index.ts';
import { exhaustedUntil } from '../shared/deadline.ts';

export interface BudgetState {
  /** The last `task-bulk` state a response or GET /api/rate-limits reported; null before the first. */
  readonly budget: RateLimitState | null;
  /** When reassigning may start again (a Date.now()-style time), or null when it may now. */
  readonly cooldownUntil: number | null;
}

export const UNKNOWN_BUDGET: BudgetState = { budget: null, cooldownUntil: null };

/** Takes in a reported state; an exhausted budget pauses until it refills, never shortening a pause. */
export function adoptBudget(state: BudgetState, reported: RateLimitState): BudgetState {
  const until = exhaustedUntil(reported);
  return until === null ? { ...state, budget: reported } : holdUntil({ ...state, budget: reported }, until);
}

/** Pauses reassigning until `until` (a 429's Retry-After), or longer if already paused longer. */
export function holdUntil(state: BudgetState, until: number): BudgetState {
  return { ...state, cooldownUntil: Math.max(state.cooldownUntil ?? 0, until) };
}

/** The pause is over: the budget is read again (its state may still say exhausted, which pauses again). */
export const cooledDown = (state: BudgetState): BudgetState => ({ ...state, cooldownUntil: null });

/** The `task-bulk` entry of GET /api/rate-limits as a header-style state received at `now`. */
export function bulkBudgetOf(reports: readonly ControlReport[], now: number): RateLimitState | null {
  const bulk = reports.find((report) => report.control === 'task-bulk');
  if (!bulk) return null;
  const { limit, windowSeconds, remaining, resetSeconds } = bulk;
  return {
    policy: bulk.control,
    limit,
    windowSeconds,
    remaining,
    resetSeconds,
    retryAfter: null,
    receivedAt: now,
  };
}
