// The portal's shell: who is signed in, and the Login page, the change-password view or the URL's page.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { type ApiClient, isApiError, type User } from '../../src/client/index.ts';
import { AccountPage } from './account/account-page.tsx';
import { ChangePasswordPage } from './account/change-password-page.tsx';
import { AdminPage } from './admin/admin-page.tsx';
import { ClientsPage } from './clients/clients-page.tsx';
import { LoginPage } from './login/login-page.tsx';
import { PeoplePage } from './people/people-page.tsx';
import { retryDeadline } from './shared/deadline.ts';
import { PORTAL_NAME, useDocumentTitle } from './shared/page-title.ts';
import { taskIdFromHash, VIEW_HASHES, VIEW_LABELS, viewFromHash, viewsFor } from './shared/portal-view.ts';
import { useCountdown } from './shared/use-countdown.ts';
import { describeError, duration } from './shared/wording.ts';
import { TaskView } from './tasks/task-view.tsx';
import { TasksPage } from './tasks/tasks-page.tsx';

type Session =
  | { readonly kind: 'checking' }
  | { readonly kind: 'signed-out'; readonly notice: string | null }
  | { readonly kind: 'signed-in'; readonly user: User }
  | { readonly kind: 'unavailable'; readonly text: string; readonly until: number | null };

interface Props {
  readonly client: ApiClient;
  /** Subscribes to the answers that say the signed-in user must choose a new password first. */
  readonly onPasswordChangeRequired?: (listener: () => void) => () => void;
}

export function App({ client, onPasswordChangeRequired }: Props) {
  const [session, setSession] = useState<Session>({ kind: 'checking' });
  const [signOutError, setSignOutError] = useState<string | null>(null);
  const hash = useHash();

  // A 403 PASSWORD_CHANGE_REQUIRED from any call (another tab signed in with a temporary password):
  // the signed-in view gives way to the change-password view.
  useEffect(
    () =>
      onPasswordChangeRequired?.(() =>
        setSession((now) =>
          now.kind === 'signed-in'
            ? { kind: 'signed-in', user: { ...now.user, mustChangePassword: true } }
            : now,
        ),
      ),
    [onPasswordChangeRequired],
  );

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

  const ended = useCallback((notice: string) => setSession({ kind: 'signed-out', notice }), []);
  // Until a temporary password is replaced, nothing but the change-password view opens.
  const mustChange = session.kind === 'signed-in' && session.user.mustChangePassword === true;
  const views = session.kind === 'signed-in' && !mustChange ? viewsFor(session.user) : [];
  const view = session.kind === 'signed-in' ? viewFromHash(session.user, hash) : 'tasks';
  // A task's own view (#task/42) belongs to Tasks: the navigation marks Tasks while it is open.
  const taskId = taskIdFromHash(hash);
  const passwordChosen = () =>
    setSession((now) =>
      now.kind === 'signed-in'
        ? { kind: 'signed-in', user: { ...now.user, mustChangePassword: false } }
        : now,
    );

  return (
    <>
      <header class="top-bar">
        <span class="brand">{PORTAL_NAME}</span>
        {views.length > 1 && (
          <nav class="sections" aria-label="Portal pages">
            {views.map((item) => (
              <a key={item} href={VIEW_HASHES[item]} aria-current={item === view ? 'page' : undefined}>
                {VIEW_LABELS[item]}
              </a>
            ))}
          </nav>
        )}
        {session.kind === 'signed-in' && (
          <span class="who">
            <span>{session.user.name}</span>
            {!mustChange && (
              <a href={VIEW_HASHES.account} aria-current={view === 'account' ? 'page' : undefined}>
                {VIEW_LABELS.account}
              </a>
            )}
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
        {session.kind === 'checking' && <Checking />}
        {session.kind === 'signed-out' && (
          <LoginPage
            client={client}
            notice={session.notice}
            onSignedIn={(user) => setSession({ kind: 'signed-in', user })}
          />
        )}
        {session.kind === 'signed-in' &&
          (mustChange ? (
            <ChangePasswordPage
              client={client}
              user={session.user}
              onSignedOut={ended}
              onChanged={passwordChosen}
            />
          ) : view === 'admin' ? (
            <AdminPage client={client} user={session.user} onSignedOut={ended} />
          ) : view === 'clients' ? (
            <ClientsPage client={client} user={session.user} onSignedOut={ended} />
          ) : view === 'people' ? (
            <PeoplePage client={client} user={session.user} onSignedOut={ended} />
          ) : view === 'account' ? (
            <AccountPage client={client} user={session.user} onSignedOut={ended} />
          ) : taskId !== null ? (
            <TaskView key={taskId} client={client} taskId={taskId} onSignedOut={ended} />
          ) : (
            <TasksPage client={client} user={session.user} onSignedOut={ended} />
          ))}
        {session.kind === 'unavailable' && (
          <Unavailable text={session.text} until={session.until} retry={check} />
        )}
      </main>
    </>
  );
}

/** The URL's hash, followed as it changes (the navigation's links and the Back button set it). */
function useHash(): string {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const follow = () => setHash(location.hash);
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  return hash;
}

/** Finding out who is signed in: the portal's name alone as the title until a view is known. */
function Checking() {
  useDocumentTitle(null);
  return <p aria-busy="true">Loading…</p>;
}

/** The portal could not start: why, how long to wait, and a way to try again. */
function Unavailable({ text, until, retry }: { text: string; until: number | null; retry: () => void }) {
  useDocumentTitle('Not available');
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
