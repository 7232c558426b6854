// A list on the Account page with actions on it: one at a time, each outcome said, reloaded after.
import { useState } from 'preact/hooks';
import { isApiError } from '../../../src/client/index.ts';
import type { LoadTroubleHandle } from '../shared/use-load-trouble.ts';
import { useLoadedList } from '../shared/use-loaded-list.ts';
import { describeError } from '../shared/wording.ts';

export interface AccountListHandle<T> {
  /** Null until the first load answers. */
  readonly list: readonly T[] | null;
  readonly loading: boolean;
  /** What the last action did, for the list's live region. */
  readonly outcome: string | null;
  /** Why the last action failed, for the list's alert. */
  readonly problem: string | null;
  /** The key of the item being acted on, or '*' for an action on the whole list. */
  readonly acting: string | null;
  readonly reload: () => void;
  /**
   * Runs an action on `key` and says its outcome; its failure is worded by `describe`. The list
   * loads again either way: after a refusal (an item already gone) it shows what is there now.
   */
  readonly act: (
    key: string,
    action: () => Promise<string>,
    describe?: (error: unknown) => string,
  ) => Promise<boolean>;
}

export function useAccountList<T>(
  load: () => Promise<readonly T[]>,
  trouble: Pick<LoadTroubleHandle, 'report' | 'resumed'>,
  /** The session is gone: back to the Login page with this notice. */
  onSignedOut: (notice: string) => void,
): AccountListHandle<T> {
  const { list, loading, reload } = useLoadedList(load, trouble);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [acting, setActing] = useState<string | null>(null);

  const act = async (key: string, action: () => Promise<string>, describe = describeError) => {
    setActing(key);
    setOutcome(null);
    setProblem(null);
    try {
      setOutcome(await action());
      return true;
    } catch (failure) {
      if (isApiError(failure, 'UNAUTHENTICATED')) onSignedOut(describeError(failure));
      else setProblem(describe(failure));
      return false;
    } finally {
      setActing(null);
      reload();
    }
  };

  return { list, loading, outcome, problem, acting, reload, act };
}
