// The login locks an admin sees, loaded again after a pause or on request, and the one-click unlock.
import { useCallback, useState } from 'preact/hooks';
import { type ApiClient, isApiError, type LoginLock } from '../../../src/client/index.ts';
import type { LoadTroubleHandle } from '../shared/use-load-trouble.ts';
import { useLoadedList } from '../shared/use-loaded-list.ts';
import { describeError } from '../shared/wording.ts';

export interface LoginLocksHandle {
  /** Null until the first load answers. */
  readonly locks: readonly LoginLock[] | null;
  readonly loading: boolean;
  /** The account being unlocked right now, if any. */
  readonly unlocking: string | null;
  /** What the last unlock did, for a status line. */
  readonly notice: string | null;
  readonly error: string | null;
  readonly reload: () => void;
  readonly unlock: (email: string) => Promise<void>;
}

export function useLoginLocks(
  client: ApiClient,
  trouble: Pick<LoadTroubleHandle, 'report' | 'resumed' | 'loaded'>,
  /** The session is gone: back to the Login page with this notice. */
  onSignedOut: (notice: string) => void,
  /** Told after an unlock succeeded (the page refreshes its events: the reset is one). */
  onUnlocked: () => void,
): LoginLocksHandle {
  const load = useCallback(() => client.loginLocks(), [client]);
  const { list: locks, setList: setLocks, loading, reload } = useLoadedList(load, trouble);
  const [unlocking, setUnlocking] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const unlock = async (email: string) => {
    setUnlocking(email);
    setNotice(null);
    setError(null);
    try {
      await client.resetLoginLock(email);
      // Gone from the list at once; the reload that follows shows any other lock that still holds.
      setLocks((shown) => shown?.filter((lock) => lock.email !== email) ?? null);
      setNotice(`${email} is unlocked and can sign in again.`);
      reload();
      onUnlocked();
    } catch (failure) {
      if (isApiError(failure, 'UNAUTHENTICATED')) onSignedOut(describeError(failure));
      else setError(`Unlocking ${email} failed. ${describeError(failure)}`);
    } finally {
      setUnlocking(null);
    }
  };

  return { locks, loading, unlocking, notice, error, reload, unlock };
}
