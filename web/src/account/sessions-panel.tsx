// "Where you're signed in": the account's sessions, each other one ended with a click, or all.
import type { ApiClient, Session } from '../../../src/client/index.ts';
import { whileBusy } from '../shared/focus-hand-off.ts';
import { Outcome, Problem } from '../shared/live-regions.tsx';
import { browserName, describeEndError, endedSentence, when } from './account-wording.ts';
import type { AccountListHandle } from './use-account-list.ts';

interface Props {
  readonly client: ApiClient;
  /** Held by the page, so that a password change can load the list again. */
  readonly sessions: AccountListHandle<Session>;
}

export function SessionsPanel({ client, sessions }: Props) {
  const { list, loading, outcome, problem, acting } = sessions;
  const others = list?.filter((session) => !session.current).length ?? 0;

  const end = (session: Session) =>
    sessions.act(
      session.id,
      async () => {
        await client.endSession(session.id);
        return `${browserName(session.userAgent)} is signed out.`;
      },
      (error) => describeEndError(error, 'session'),
    );
  const endOthers = () =>
    sessions.act(
      '*',
      async () => endedSentence(await client.endOtherSessions()),
      (error) => describeEndError(error, 'session'),
    );

  return (
    <section class="panel" aria-labelledby="sessions-title">
      <div class="panel-head">
        <h2 id="sessions-title">Where you’re signed in</h2>
        {others > 0 && (
          <button
            type="button"
            class="secondary"
            data-hand-off="sessions-outcome"
            {...whileBusy(acting !== null, () => void endOthers())}
          >
            End all other sessions
          </button>
        )}
      </div>
      <p class="hint">
        Every browser signed in to your account now. End a session you do not recognise, or one left signed in
        somewhere: that browser is signed out at once.
      </p>
      {/* Where an ended session's button, gone with its item, hands focus. */}
      <Outcome id="sessions-outcome" text={outcome} />
      <Problem id="sessions-problem" text={problem} />
      {list === null ? (
        loading && <p aria-busy="true">Loading where you are signed in…</p>
      ) : (
        <ul class="passkeys" id="sessions" aria-label="Your sessions" aria-busy={loading}>
          {list.map((session) => (
            <li class="passkey" key={session.id} data-session-current={session.current ? 'true' : undefined}>
              <span class="passkey-name">
                {browserName(session.userAgent)}
                {session.current && <span class="badge">This browser</span>}
              </span>
              <span class="hint">
                Signed in {when(session.createdAt)}; last active {when(session.lastSeenAt)}.
              </span>
              {!session.current && (
                <span class="actions">
                  <button
                    type="button"
                    class="secondary"
                    data-hand-off="sessions-outcome"
                    aria-label={`End session: ${browserName(session.userAgent)}, signed in ${when(session.createdAt)}`}
                    {...whileBusy(acting !== null, () => void end(session))}
                  >
                    {acting === session.id ? 'Ending…' : 'End session'}
                  </button>
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
