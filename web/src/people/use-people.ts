// The People page's accounts: the list and its changes, each with its outcome.
import { useCallback, useState } from 'preact/hooks';
import { type AdminUser, type ApiClient, isApiError, type Role } from '../../../src/client/index.ts';
import type { LoadTroubleHandle } from '../shared/use-load-trouble.ts';
import { useLoadedList } from '../shared/use-loaded-list.ts';
import { describeError } from '../shared/wording.ts';
import { withPerson } from './people-list.ts';
import { describePeopleError } from './people-wording.ts';

/** A temporary password, shown once: to whom it belongs, and the password itself. */
export interface IssuedPassword {
  readonly person: AdminUser;
  readonly password: string;
  /** Made by adding the account, or by resetting its password. */
  readonly reason: 'added' | 'reset';
}

/** Why the last change was refused, and on which account (0: adding one), so it is shown where it was made. */
export interface PeopleProblem {
  readonly text: string;
  readonly about: number;
  readonly code: string;
}

export interface PeopleHandle {
  /** Null until the first load answers. */
  readonly list: readonly AdminUser[] | null;
  readonly loading: boolean;
  /** The id of the account being changed (0 while adding one), or null. */
  readonly acting: number | null;
  readonly outcome: string | null;
  readonly problem: PeopleProblem | null;
  readonly issued: IssuedPassword | null;
  readonly reload: () => void;
  readonly add: (person: { email: string; name: string; role: Role }) => Promise<boolean>;
  readonly edit: (person: AdminUser, changes: { name?: string; role?: Role }) => Promise<boolean>;
  readonly setDisabled: (person: AdminUser, disabled: boolean) => Promise<boolean>;
  readonly reset: (person: AdminUser) => Promise<boolean>;
  /** The temporary password has been passed on: it is not shown again. */
  readonly dismissIssued: () => void;
}

export function usePeople(
  client: ApiClient,
  trouble: Pick<LoadTroubleHandle, 'report' | 'resumed' | 'loaded'>,
  onSignedOut: (notice: string) => void,
): PeopleHandle {
  const load = useCallback(() => client.users(), [client]);
  const { list, setList, loading, reload } = useLoadedList(load, trouble);
  const [acting, setActing] = useState<number | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [problem, setProblem] = useState<PeopleProblem | null>(null);
  const [issued, setIssued] = useState<IssuedPassword | null>(null);

  /** Runs one change on account `id`; the account it answers replaces the one shown. */
  const run = async (id: number, change: () => Promise<{ person: AdminUser; said: string }>) => {
    setActing(id);
    setOutcome(null);
    setProblem(null);
    try {
      const { person, said } = await change();
      setList((shown) => withPerson(shown ?? [], person));
      setOutcome(said);
      return true;
    } catch (failure) {
      if (isApiError(failure, 'UNAUTHENTICATED')) onSignedOut(describeError(failure));
      else {
        const code = isApiError(failure) ? failure.code : 'UNEXPECTED';
        setProblem({ text: describePeopleError(failure), about: id, code });
        // A refusal may come from a list out of date (an account gone, another admin's change).
        reload();
      }
      return false;
    } finally {
      setActing(null);
    }
  };

  const add = (input: { email: string; name: string; role: Role }) =>
    run(0, async () => {
      const { user, temporaryPassword } = await client.createUser(input);
      setIssued({ person: user, password: temporaryPassword, reason: 'added' });
      return { person: user, said: `${user.name} (${user.email}) is added.` };
    });

  const edit = (person: AdminUser, changes: { name?: string; role?: Role }) =>
    run(person.id, async () => {
      const user = await client.updateUser(person.id, changes);
      return { person: user, said: `${user.name} (${user.email}) is saved.` };
    });

  const setDisabled = (person: AdminUser, disabled: boolean) =>
    run(person.id, async () => {
      const user = await client.updateUser(person.id, { disabled });
      const said = disabled
        ? `${user.email} is disabled and signed out everywhere.`
        : `${user.email} is enabled and can sign in again.`;
      return { person: user, said };
    });

  const reset = (person: AdminUser) =>
    run(person.id, async () => {
      const password = await client.resetUserPassword(person.id);
      const user = { ...person, mustChangePassword: true };
      setIssued({ person: user, password, reason: 'reset' });
      return {
        person: user,
        said: `${person.email}’s password is reset, and they are signed out everywhere.`,
      };
    });

  return {
    list,
    loading,
    acting,
    outcome,
    problem,
    issued,
    reload,
    add,
    edit,
    setDisabled,
    reset,
    dismissIssued: () => setIssued(null),
  };
}
