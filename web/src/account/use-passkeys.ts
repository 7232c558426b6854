// The Account page's passkeys: the list, adding, renaming and removing, each with its outcome.
import { type PublicKeyCredentialCreationOptionsJSON, startRegistration } from '@simplewebauthn/browser';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { type ApiClient, isApiError, type Passkey, type WebAuthnJSON } from '../../../src/client/index.ts';
import { describePasskeyError } from '../shared/passkey-wording.ts';
import { describeError } from '../shared/wording.ts';

export interface PasskeysState {
  readonly list: readonly Passkey[] | null;
  /** What the last action did, for the live region ("Passkey “Laptop” added."). */
  readonly outcome: string | null;
  /** Why the last action failed, for the alert; null when it did not. */
  readonly problem: string | null;
  /** The last add was refused for want of a recent sign-in: the page asks for the password. */
  readonly needsPassword: boolean;
  readonly busy: boolean;
  add(name: string): Promise<boolean>;
  /** Signs in again with the password (the re-authentication), then adds the passkey asked for. */
  confirmPassword(email: string, password: string, name: string): Promise<boolean>;
  rename(passkey: Passkey, name: string): Promise<boolean>;
  remove(passkey: Passkey): Promise<void>;
}

export function usePasskeys(client: ApiClient, onSignedOut: (notice: string) => void): PasskeysState {
  const [list, setList] = useState<readonly Passkey[] | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [needsPassword, setNeedsPassword] = useState(false);
  const [busy, setBusy] = useState(false);

  const failed = (error: unknown) => {
    if (isApiError(error, 'UNAUTHENTICATED')) return onSignedOut(describePasskeyError(error));
    setNeedsPassword(isApiError(error, 'REAUTH_REQUIRED'));
    setProblem(describePasskeyError(error));
  };

  const reload = useCallback(async () => {
    try {
      setList(await client.passkeys());
    } catch (error) {
      failed(error);
    }
  }, [client]);

  useEffect(() => {
    void reload();
  }, [reload]);

  /** Runs one action: clears the last outcome, reports this one's, reloads the list. */
  const run = async (action: () => Promise<string>): Promise<boolean> => {
    setBusy(true);
    setOutcome(null);
    setProblem(null);
    try {
      setOutcome(await action());
      setNeedsPassword(false);
      return true;
    } catch (error) {
      failed(error);
      return false;
    } finally {
      setBusy(false);
      await reload();
    }
  };

  const add = (name: string) =>
    run(async () => {
      const options = await client.passkeyRegistrationOptions();
      const response = await startRegistration({
        optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON,
      });
      const added = await client.addPasskey(name, response as unknown as WebAuthnJSON);
      return `Passkey “${added.name}” added.`;
    });

  const confirmPassword = async (email: string, password: string, name: string) => {
    try {
      await client.login(email, password);
    } catch (error) {
      setProblem(describeError(error)); // the password's refusal, in the sign-in form's words
      return false;
    }
    return add(name);
  };

  const rename = (passkey: Passkey, name: string) =>
    run(async () => `Passkey renamed to “${(await client.renamePasskey(passkey.id, name)).name}”.`);

  const remove = async (passkey: Passkey) => {
    await run(async () => {
      await client.removePasskey(passkey.id);
      return `Passkey “${passkey.name}” removed.`;
    });
  };

  return { list, outcome, problem, needsPassword, busy, add, confirmPassword, rename, remove };
}
