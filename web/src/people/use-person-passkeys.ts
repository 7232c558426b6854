// One account's passkeys on the People page: listed when opened, removed one at a time.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { type ApiClient, isApiError, type Passkey } from '../../../src/client/index.ts';
import { describeError } from '../shared/wording.ts';
import { describePeopleError } from './people-wording.ts';

export interface PersonPasskeysHandle {
  /** Null until loaded. */
  readonly list: readonly Passkey[] | null;
  readonly outcome: string | null;
  readonly problem: string | null;
  readonly removing: number | null;
  readonly remove: (passkey: Passkey) => Promise<void>;
}

export function usePersonPasskeys(
  client: ApiClient,
  userId: number,
  onSignedOut: (notice: string) => void,
): PersonPasskeysHandle {
  const [list, setList] = useState<readonly Passkey[] | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [removing, setRemoving] = useState<number | null>(null);

  const failed = useCallback(
    (error: unknown) => {
      if (isApiError(error, 'UNAUTHENTICATED')) onSignedOut(describeError(error));
      else setProblem(describePeopleError(error));
    },
    [onSignedOut],
  );

  const load = useCallback(async () => {
    try {
      setList(await client.userPasskeys(userId));
    } catch (error) {
      failed(error);
    }
  }, [client, userId, failed]);

  useEffect(() => {
    void load();
  }, [load]);

  const remove = async (passkey: Passkey) => {
    setRemoving(passkey.id);
    setOutcome(null);
    setProblem(null);
    try {
      await client.removeUserPasskey(userId, passkey.id);
      setOutcome(`Passkey “${passkey.name}” removed: it cannot sign in to this account any more.`);
    } catch (error) {
      failed(error);
    } finally {
      setRemoving(null);
      await load();
    }
  };

  return { list, outcome, problem, removing, remove };
}
