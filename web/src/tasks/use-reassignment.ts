// Reassigning the selection: one bulk request at a time, its outcome or error, and the budget.
import { useEffect, useReducer, useRef } from 'preact/hooks';
import { type ApiClient, newIdempotencyKey } from '../../../src/client/index.ts';
import { IDLE, keyFor, type PendingReassignment, reassignReducer, sortBulkFailure } from './reassignment.ts';
import type { BulkBudgetHandle } from './use-bulk-budget.ts';

export function useReassignment(
  client: ApiClient,
  budget: Pick<BulkBudgetHandle, 'adopt' | 'hold' | 'refills'>,
  onSignedOut: (notice: string) => void,
) {
  const [state, dispatch] = useReducer(reassignReducer, IDLE);
  const { adopt, hold, refills } = budget;
  // The last reassignment whose fate is unknown: sent again, it keeps its Idempotency-Key.
  const pending = useRef<PendingReassignment | null>(null);

  useEffect(() => {
    if (refills > 0) dispatch({ type: 'refilled' });
  }, [refills]);

  /** Reassigns `taskIds` to `assigneeId` (named `assignee` in the outcome); true when it went through. */
  const reassign = async (taskIds: readonly number[], assigneeId: number, assignee: string) => {
    dispatch({ type: 'started' });
    // A new key per reassignment; the same one when this is the reassignment whose fate is unknown.
    const key = keyFor(pending.current, taskIds, assigneeId, newIdempotencyKey);
    pending.current = null;
    try {
      // The client itself sends it again with the key after a lost answer, a 502, 503 or 504.
      const result = await client.bulkReassign(taskIds, assigneeId, { idempotencyKey: key });
      dispatch({ type: 'succeeded', outcome: { ...result, assignee } });
      if (result.rateLimit) adopt(result.rateLimit);
      return true;
    } catch (error) {
      const failure = sortBulkFailure(error);
      if (failure.rateLimit) adopt(failure.rateLimit);
      if (failure.kind === 'unknown') {
        pending.current = { key, taskIds: [...taskIds], assigneeId };
        dispatch({ type: 'failed', error: failure.text });
      } else if (failure.kind === 'signed-out') {
        dispatch({ type: 'failed', error: null });
        onSignedOut(failure.notice);
      } else {
        if (failure.holdUntil !== null) hold(failure.holdUntil);
        dispatch({ type: 'failed', error: failure.text });
      }
      return false;
    }
  };

  return { ...state, reassign };
}
