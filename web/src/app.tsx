// The portal's shell: finds out who is signed in, shows the Login or the Tasks page, and signs out.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { type ApiClient, isApiError, type User } from '../../src/client/index.ts';
import { retryDeadline } from './deadline.ts';
import { LoginPage } from './login-page.tsx';
import { TasksPage } from './tasks-page.tsx';
import { useCountdown } from './use-countdown.ts';
import { describeError, duration } from './wording.ts';

type Session =
  | { readonly kind: 'checking' }
  | { readonly kind: 'signed-out'; readonly notice: string | null }
  | { readonly kind: 'signed-in'; readonly user: User }
  | { readonly kind: 'unavailable'; readonly text: string; readonly until: number | null };

export function App({ client }: { client: ApiClient }) {
  const [session, setSession] = useState<Session>({ kind: 'checking' });
  const [signOutError, setSignOutError] = useState<string | null>(null);

  const check = useCallback(async () => {
    setSession({ kind: 'checking' });
    try {
      setSession({ kind: 'signed-in', user: await client.me() });
    } catch (error) {
      // The unauthenticated budget refusing says the same as a 401 (no session), and it never
      // blocks the login path, so the form is still the way forward.
      if (isApiError(error, 'UNAUTHENTICATED', 'API_RATE_LIMIT_UNAUTHENTICATED'))
        setSession({ kind: 'signed-out', notice: null });
      else setSession({ kind: 'unavailable', text: describeError(error), until: retryDeadline(error) });
    }
  }, [client]);

  useEffect(() => {
    void check();
  }, [check]);

  const signOut = async () => {
    setSignOutError(null);
    try {
      await client.logout();
    } catch (error) {
      // Already signed out on the server (the session expired): the outcome the user asked for.
      if (!isApiError(error, 'UNAUTHENTICATED')) {
        const until = retryDeadline(error);
        const wait = until === null ? '' : ` Try again in ${duration((until - Date.now()) / 1000)}.`;
        setSignOutError(`Signing out failed. ${describeError(error)}${wait}`);
        return;
      }
    }
    setSession({ kind: 'signed-out', notice: 'You have signed out.' });
  };

  const ended = (notice: string) => setSession({ kind: 'signed-out', notice });

  return (
    <>
      <header class="top-bar">
        <span class="brand">Task portal</span>
        {session.kind === 'signed-in' && (
          <span class="who">
            <span>{session.user.name}</span>
            <button type="button" class="secondary" onClick={signOut}>
              Sign out
            </button>
          </span>
        )}
      </header>
      {signOutError && (
        <p class="banner error" role="alert">
          {signOutError}
        </p>
      )}
      <main>
        {session.kind === 'checking' && <p aria-busy="true">Loading…</p>}
        {session.kind === 'signed-out' && (
          <LoginPage
            client={client}
            notice={session.notice}
            onSignedIn={(user) => setSession({ kind: 'signed-in', user })}
          />
        )}
        {session.kind === 'signed-in' && (
          <TasksPage client={client} user={session.user} onSignedOut={ended} />
        )}
        {session.kind === 'unavailable' && (
          <Unavailable text={session.text} until={session.until} retry={check} />
        )}
      </main>
    </>
  );
}

/** The portal could not start: why, how long to wait, and a way to try again. */
function Unavailable({ text, until, retry }: { text: string; until: number | null; retry: () => void }) {
  const wait = useCountdown(until);
  return (
    <section class="card narrow" aria-labelledby="unavailable-title">
      <h1 id="unavailable-title">The portal is not available right now</h1>
      <p role="alert">{text}</p>
      {wait > 0 && <p role="timer">You can try again in {duration(wait)}.</p>}
      <button type="button" onClick={retry} disabled={wait > 0}>
        Try again
      </button>
    </section>
  );
}
