// Changing one's password: one request at a time, refusals by field, the wait after wrong ones.
import { useState } from 'preact/hooks';
import { type ApiClient, isApiError } from '../../../src/client/index.ts';
import { retryDeadline } from '../shared/deadline.ts';
import { useCountdown } from '../shared/use-countdown.ts';
import { describeError } from '../shared/wording.ts';
import { type PasswordChangeProblem, passwordChangeProblem } from './account-wording.ts';

export interface PasswordChangeHandle {
  readonly busy: boolean;
  readonly problem: PasswordChangeProblem | null;
  /** Seconds left before another try is allowed (too many wrong current passwords); 0 when none. */
  readonly wait: number;
  /** Changes the password; true when it was changed. */
  readonly change: (currentPassword: string, newPassword: string) => Promise<boolean>;
  /** Shows a problem found on the page itself (the two new passwords differ). */
  readonly refuse: (problem: PasswordChangeProblem | null) => void;
}

export function usePasswordChange(
  client: ApiClient,
  /** The session is gone: back to the Login page with this notice. */
  onSignedOut: (notice: string) => void,
): PasswordChangeHandle {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<PasswordChangeProblem | null>(null);
  const [until, setUntil] = useState<number | null>(null);
  const wait = useCountdown(until);

  const change = async (currentPassword: string, newPassword: string) => {
    if (busy) return false;
    setBusy(true);
    setProblem(null);
    try {
      // On success the server rotates this session and ends every other one; the client keeps the new CSRF token.
      await client.changePassword(currentPassword, newPassword);
      setUntil(null);
      return true;
    } catch (error) {
      if (isApiError(error, 'UNAUTHENTICATED')) {
        onSignedOut(describeError(error));
        return false;
      }
      setProblem(passwordChangeProblem(error));
      setUntil(retryDeadline(error));
      return false;
    } finally {
      setBusy(false);
    }
  };

  return { busy, problem, wait, change, refuse: setProblem };
}
