// Sign in with a passkey (docs/rules.md#passkeys): a button, and autofill where supported.
import {
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
} from '@simplewebauthn/browser';
import { useEffect, useState } from 'preact/hooks';
import { type ApiClient, isApiError, type User, type WebAuthnJSON } from '../../../src/client/index.ts';
import { describePasskeyError } from '../shared/passkey-wording.ts';

interface Props {
  readonly client: ApiClient;
  readonly onSignedIn: (user: User) => void;
}

/** Options from the server, the browser's ceremony, the signed answer back: one passkey sign-in. */
async function signInWithPasskey(client: ApiClient, autofill: boolean): Promise<User> {
  const options = await client.passkeySignInOptions();
  const response = await startAuthentication({
    optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON,
    useBrowserAutofill: autofill,
  });
  return client.passkeySignIn(response as unknown as WebAuthnJSON);
}

/**
 * The passkey way in, under the password form. The form's email field carries `autocomplete=
 * "username webauthn"`, so where the browser supports conditional mediation its autofill offers
 * the passkeys it holds; the button asks for one at once (and cancels the autofill request:
 * SimpleWebAuthn aborts the one before).
 */
export function PasskeySignIn({ client, onSignedIn }: Props) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const supported = typeof window !== 'undefined' && browserSupportsWebAuthn();

  useEffect(() => {
    let live = true;
    void (async () => {
      if (!(await browserSupportsWebAuthnAutofill()) || !live) return;
      try {
        onSignedIn(await signInWithPasskey(client, true));
      } catch (error) {
        // Cancelled by the button, or a page left: nothing to say. A refused passkey is said.
        if (live && isApiError(error)) setProblem(describePasskeyError(error));
      }
    })();
    return () => {
      live = false;
    };
  }, [client]);

  if (!supported) return null;

  const signIn = async () => {
    if (busy) return;
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await signInWithPasskey(client, false));
    } catch (error) {
      setBusy(false);
      setProblem(describePasskeyError(error));
    }
  };

  return (
    <div class="passkey-sign-in">
      <p class="or" aria-hidden="true">
        or
      </p>
      {/* Not disabled while waiting, so focus stays on it; a second press waits for the first. */}
      <button
        type="button"
        class="secondary"
        onClick={signIn}
        aria-disabled={busy ? 'true' : undefined}
        aria-describedby={problem ? 'passkey-error' : undefined}
      >
        {busy ? 'Waiting for your passkey…' : 'Sign in with a passkey'}
      </button>
      <div id="passkey-error" role="alert">
        {problem && <p class="error">{problem}</p>}
      </div>
    </div>
  );
}
