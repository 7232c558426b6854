// The Login page: CSRF bootstrap, email and password, refusals in plain words.
import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiClient, ApiError, isApiError, type User } from '../../../src/client/index.ts';
import { normaliseEmail } from '../../../src/email.ts';
import { retryDeadline } from '../shared/deadline.ts';
import { fieldErrorProps } from '../shared/field-error.ts';
import { useFocusOnShow } from '../shared/focus-hand-off.ts';
import { useDocumentTitle } from '../shared/page-title.ts';
import { TextField } from '../shared/text-field.tsx';
import { useCountdown } from '../shared/use-countdown.ts';
import { describeError, duration } from '../shared/wording.ts';
import { PasskeySignIn } from './passkey-sign-in.tsx';
import { useProvedWork } from './use-proved-work.ts';

interface Refusal {
  readonly text: string;
  /** When signing in may be tried again (429s), or null. */
  readonly until: number | null;
  /** The account the wait applies to, when only that account is locked. */
  readonly account: string | null;
  /** The server was too busy to check (LOGIN_BUSY): these credentials are sent again once by themselves. */
  readonly retryWith: Credentials | null;
  /** The email and password were refused as they are (one generic message for both, no enumeration). */
  readonly wrongCredentials: boolean;
}

interface Credentials {
  readonly email: string;
  readonly password: string;
}

interface Props {
  readonly client: ApiClient;
  /** Said above the form, e.g. after signing out or when the session ended. */
  readonly notice: string | null;
  readonly onSignedIn: (user: User) => void;
}

export function LoginPage({ client, notice, onSignedIn }: Props) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const wait = useCountdown(refusal?.until ?? null);
  const heading = useRef<HTMLHeadingElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);
  const work = useProvedWork();
  useDocumentTitle('Sign in');

  useFocusOnShow(heading);
  useEffect(() => {
    // The token login needs; if this fails, login fetches one itself.
    client.csrf().catch(() => {});
  }, [client]);

  const attempt = async (credentials: Credentials, automatic: boolean) => {
    if (busy) return;
    setBusy(true);
    setRefusal(null);
    try {
      // Under a flood the client solves the server's challenge in a worker and sends it again (docs/rules.md#proved-work).
      const user = await client.login(credentials.email, credentials.password, work);
      onSignedIn(user);
    } catch (error) {
      setBusy(false);
      work.done();
      const accountOnly = error instanceof ApiError && error.rateLimit?.policy === 'login-account';
      // A busy server checked nothing: the same sign-in is tried again once, when the wait is over.
      const busyServer = isApiError(error, 'LOGIN_BUSY');
      setRefusal({
        text: describeError(error),
        until: retryDeadline(error),
        account: accountOnly ? normaliseEmail(credentials.email) : null,
        retryWith: busyServer && !automatic ? credentials : null,
        wrongCredentials: isApiError(error, 'INVALID_CREDENTIALS'),
      });
      // The password field takes focus on every refusal: the button may be disabled by a wait.
      passwordInput.current?.focus();
      if (busyServer) return;
      setPassword('');
    }
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void attempt({ email: email.trim(), password }, false);
  };

  useEffect(() => {
    if (!refusal?.retryWith || refusal.until === null || wait > 0) return;
    void attempt(refusal.retryWith, true);
  }, [refusal, wait]);

  // A lock on one account leaves the form open for another; a lock on the network does not.
  const locked = wait > 0 && (refusal?.account == null || refusal.account === normaliseEmail(email));
  // Both fields carry the one generic message; only a refusal of the credentials marks them invalid.
  const fieldError = fieldErrorProps(refusal?.wrongCredentials ?? false, refusal ? 'login-error' : null);
  return (
    <section class="card narrow" aria-labelledby="login-title">
      <h1 id="login-title" tabIndex={-1} ref={heading}>
        Sign in
      </h1>
      {notice && <p role="status">{notice}</p>}
      <form onSubmit={submit}>
        <TextField
          id="email"
          label="Email"
          type="email"
          autocomplete="username webauthn"
          required
          {...fieldError}
          value={email}
          onValue={setEmail}
        />
        <TextField
          id="password"
          label="Password"
          type="password"
          autocomplete="current-password"
          required
          {...fieldError}
          inputRef={passwordInput}
          value={password}
          onValue={setPassword}
        />
        {/* A polite live region, present from the start so that its words are announced when they come. */}
        <p role="status" id="login-work">
          {work.solving &&
            (work.rounds > 1
              ? 'Still very busy: your browser is making more room for your sign-in.'
              : 'Sign-in is very busy: your browser is making room for you. Nothing to do, it takes a moment.')}
        </p>
        <div id="login-error" role="alert">
          {refusal && <p class="error">{refusal.text}</p>}
          {refusal?.until != null &&
            (wait > 0 ? (
              <p role="timer">
                {refusal.retryWith
                  ? `Trying again by itself in ${duration(wait)}.`
                  : `${refusal.account ? 'This account can' : 'You can'} try again in ${duration(wait)}.`}
              </p>
            ) : (
              <p>You can try again now.</p>
            ))}
        </div>
        {/* Not disabled while signing in, so that focus stays on it; a second press waits for the first. */}
        <button type="submit" disabled={locked} aria-disabled={busy ? 'true' : undefined}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <PasskeySignIn client={client} onSignedIn={onSignedIn} />
    </section>
  );
}
