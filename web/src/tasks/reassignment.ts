// One bulk reassignment as the page shows it: busy, its outcome, its error, and the note after a pause.
import { type BulkReassignResult, isApiError, type RateLimitState } from '../../../src/client/index.ts';
import { retryDeadline } from '../shared/deadline.ts';
import { BULK_FATE_UNKNOWN, describeError } from '../shared/wording.ts';

export type Outcome = BulkReassignResult & {
  readonly assignee: string;
  /** The server answered the stored result of an earlier try with the same key: applied once. */
  readonly replayed: boolean;
};

/**
 * A reassignment sent under an Idempotency-Key whose fate is unknown (its answer was lost, or a
 * try with the key is still in flight): pressing Reassign again for the same tasks and assignee
 * sends it again under the same key, so the server applies it once at most.
 */
export interface PendingReassignment {
  readonly key: string;
  readonly taskIds: readonly number[];
  readonly assigneeId: number;
}

/** The key for reassigning `taskIds` to `assigneeId`: the pending one for the same reassignment, else `fresh()`. */
export function keyFor(
  pending: PendingReassignment | null,
  taskIds: readonly number[],
  assigneeId: number,
  fresh: () => string,
): string {
  const same =
    pending !== null &&
    pending.assigneeId === assigneeId &&
    pending.taskIds.length === taskIds.length &&
    pending.taskIds.every((id, i) => id === taskIds[i]);
  return same ? pending.key : fresh();
}

/**
 * Whether a failed reassignment may or may not have been applied: no answer, a proxy's 502 or
 * 504, the service's 503, or its key still in flight (the client's own retries spent).
 */
export function fateUnknown(error: unknown): boolean {
  if (!isApiError(error)) return false;
  return (
    error.code === 'NETWORK_ERROR' ||
    error.code === 'IDEMPOTENCY_KEY_IN_FLIGHT' ||
    [502, 503, 504].includes(error.status)
  );
}

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
  /** Maybe applied: the same reassignment is sent again under the same key (PendingReassignment). */
  | { readonly kind: 'unknown'; readonly text: string; readonly rateLimit: RateLimitState | null }
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
  if (fateUnknown(error)) return { kind: 'unknown', text: BULK_FATE_UNKNOWN, rateLimit };
  const holdUntil = isApiError(error, 'TASK_BULK_RATE_LIMIT') ? retryDeadline(error) : null;
  return { kind: 'refused', text, rateLimit, holdUntil };
}
