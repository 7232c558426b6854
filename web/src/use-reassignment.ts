// Reassigning the selection: one bulk request at a time, its outcome or error, and what it says of the budget.
import { useEffect, useReducer } from 'preact/hooks';
import type { ApiClient } from '../../src/client/index.ts';
import { IDLE, reassignReducer, sortBulkFailure } from './reassignment.ts';
import type { BulkBudgetHandle } from './use-bulk-budget.ts';

export function useReassignment(
  client: ApiClient,
  budget: Pick<BulkBudgetHandle, 'adopt' | 'hold' | 'refills'>,
  onSignedOut: (notice: string) => void,
) {
  const [state, dispatch] = useReducer(reassignReducer, IDLE);
  const { adopt, hold, refills } = budget;

  useEffect(() => {
    if (refills > 0) dispatch({ type: 'refilled' });
  }, [refills]);

  /** Reassigns `taskIds` to `assigneeId` (named `assignee` in the outcome); true when it went through. */
  const reassign = async (taskIds: readonly number[], assigneeId: number, assignee: string) => {
    dispatch({ type: 'started' });
    try {
      const result = await client.bulkReassign(taskIds, assigneeId);
      dispatch({ type: 'succeeded', outcome: { ...result, assignee } });
      if (result.rateLimit) adopt(result.rateLimit);
      return true;
    } catch (error) {
      const failure = sortBulkFailure(error);
      if (failure.rateLimit) adopt(failure.rateLimit);
      if (failure.kind === 'signed-out') {
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
