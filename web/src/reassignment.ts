// One bulk reassignment as the page shows it: busy, its outcome, its error, and the note after a pause.
import { type BulkReassignResult, isApiError, type RateLimitState } from '../../src/client/index.ts';
import { retryDeadline } from './deadline.ts';
import { describeError } from './wording.ts';

export type Outcome = BulkReassignResult & { readonly assignee: string };

export interface ReassignState {
  readonly busy: boolean;
  readonly outcome: Outcome | null;
  readonly error: string | null;
  readonly note: string | null;
}

export const IDLE: ReassignState = { busy: false, outcome: null, error: null, note: null };

export type ReassignEvent =
  | { readonly type: 'started' }
  | { readonly type: 'succeeded'; readonly outcome: Outcome }
  /** `error` is null when there is nothing to show here (the session ended: the page goes). */
  | { readonly type: 'failed'; readonly error: string | null }
  /** The bulk budget admits again after a pause. */
  | { readonly type: 'refilled' };

export function reassignReducer(state: ReassignState, event: ReassignEvent): ReassignState {
  switch (event.type) {
    case 'started':
      return { busy: true, outcome: null, error: null, note: null };
    case 'succeeded':
      return { ...state, busy: false, outcome: event.outcome };
    case 'failed':
      return { ...state, busy: false, error: event.error };
    case 'refilled':
      return { ...state, error: null, note: 'You can reassign again.' };
  }
}

export type BulkFailure =
  | { readonly kind: 'signed-out'; readonly notice: string; readonly rateLimit: RateLimitState | null }
  | {
      readonly kind: 'refused';
      readonly text: string;
      /** The budget the refusal reported, if it reported one. */
      readonly rateLimit: RateLimitState | null;
      /** Set for a bulk 429: reassigning waits until then. */
      readonly holdUntil: number | null;
    };

/** Sorts the error of a reassignment into what the page does about it. */
export function sortBulkFailure(error: unknown): BulkFailure {
  const rateLimit = isApiError(error) ? error.rateLimit : null;
  const text = describeError(error);
  if (isApiError(error, 'UNAUTHENTICATED')) return { kind: 'signed-out', notice: text, rateLimit };
  const holdUntil = isApiError(error, 'TASK_BULK_RATE_LIMIT') ? retryDeadline(error) : null;
  return { kind: 'refused', text, rateLimit, holdUntil };
}
