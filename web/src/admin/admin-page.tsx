// The Admin page: the login locks in force, each account unlocked with one click, and recent security events.
import { useCallback, useRef } from 'preact/hooks';
import type { ApiClient, LoginLock, LoginPressure, SecurityEvent, User } from '../../../src/client/index.ts';
import { useFocusHandOff, useFocusOnShow, whileBusy } from '../shared/focus-hand-off.ts';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { useDocumentTitle } from '../shared/page-title.ts';
import { VIEW_LABELS } from '../shared/portal-view.ts';
import { useLoadTrouble } from '../shared/use-load-trouble.ts';
import { useSecurityEvents } from '../shared/use-security-events.ts';
import { duration } from '../shared/wording.ts';
import {
  addressesText,
  controlLabel,
  eventSubject,
  failuresText,
  lockKey,
  subjectOf,
} from './admin-wording.ts';
import { EventCells } from './event-cells.tsx';
import { useLoginLocks } from './use-login-locks.ts';
import { useLoginPressure } from './use-login-pressure.ts';

/** Events per request: a screenful, well under the server's 200. */
const EVENTS_PER_PAGE = 20;

interface Props {
  readonly client: ApiClient;
  readonly user: User;
  /** The session is gone: back to the Login page with this notice. */
  readonly onSignedOut: (notice: string) => void;
}

export function AdminPage({ client, user, onSignedOut }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  const section = useRef<HTMLElement>(null);
  useFocusOnShow(heading);
  useFocusHandOff(section, heading);
  useDocumentTitle(VIEW_LABELS.admin);
  const trouble = useLoadTrouble(onSignedOut);
  const loadEvents = useCallback(
    (cursor?: string) => client.securityEvents({ limit: EVENTS_PER_PAGE, cursor }),
    [client],
  );
  const events = useSecurityEvents(loadEvents, trouble);
  const locks = useLoginLocks(client, trouble, onSignedOut, events.refresh);
  const pressure = useLoginPressure(client, trouble);

  const refreshAll = () => {
    locks.reload();
    events.refresh();
    pressure.reload();
  };

  return (
    <section aria-labelledby="admin-title" ref={section}>
      <h1 id="admin-title" tabIndex={-1} ref={heading}>
        {VIEW_LABELS.admin}
      </h1>
      <p class="hint">Signed in as {user.email}.</p>
      <LoadTroubleBanners trouble={trouble} what="The lists" onRetry={refreshAll} />

      <PressurePanel pressure={pressure.pressure} />

      <section class="panel" aria-labelledby="locks-title">
        <div class="panel-head">
          <h2 id="locks-title">Login locks</h2>
          <button type="button" class="secondary" {...whileBusy(locks.loading, locks.reload)}>
            Refresh locks
          </button>
        </div>
        <p class="hint">
          Accounts, network addresses and known devices refused sign-in right now after too many failed
          attempts. Unlocking an account lets its owner sign in again at once; an address or device lock ends
          by itself.
        </p>
        {/* Where an Unlock button, disabled and then gone with its row, hands focus. */}
        <p role="status" id="unlock-status" class="status" tabIndex={-1}>
          {locks.unlocking !== null ? `Unlocking ${locks.unlocking}…` : locks.notice}
        </p>
        {locks.error && (
          <p class="banner error" role="alert">
            {locks.error}
          </p>
        )}
        <LockTable
          locks={locks.locks}
          busy={locks.loading}
          unlocking={locks.unlocking}
          onUnlock={(email) => void locks.unlock(email)}
        />
      </section>

      <section class="panel" aria-labelledby="events-title">
        <div class="panel-head">
          <h2 id="events-title" tabIndex={-1}>
            Recent security events
          </h2>
          <button type="button" class="secondary" {...whileBusy(events.loading, events.refresh)}>
            Refresh events
          </button>
        </div>
        <p class="hint">Locks that started, unlocks by an admin and refused known devices, newest first.</p>
        <EventTable events={events.events} busy={events.loading} />
        {events.nextCursor !== null && (
          <div class="pager">
            <button type="button" data-hand-off="events-title" {...whileBusy(events.loading, events.older)}>
              Show older events
            </button>
          </div>
        )}
      </section>
    </section>
  );
}

/** The sign-in load of the server that answered: a warning while it turns attempts away. */
function PressurePanel({ pressure }: { pressure: LoginPressure | null }) {
  if (pressure === null) return null;
  const { gate } = pressure;
  const queued = `${gate.queued.known} known-device and ${gate.queued.shared} other sign-ins waiting, ${gate.running} of ${gate.concurrency} password checks running`;
  return (
    <section class="panel" aria-labelledby="pressure-title" id="login-pressure">
      <h2 id="pressure-title">Sign-in load</h2>
      {pressure.underPressure ? (
        <div class="banner warning" role="status">
          <p>
            Sign-in is under pressure on server {pressure.instance} since{' '}
            <time dateTime={pressure.since!}>{new Date(pressure.since!).toLocaleTimeString()}</time>:{' '}
            {pressure.shedAttempts} attempt{pressure.shedAttempts === 1 ? ' was' : 's were'} turned away
            without a password check. Known devices are still served first.
          </p>
          <p class="hint">{queued}.</p>
        </div>
      ) : (
        <p role="status">
          Sign-in is running normally on server {pressure.instance} ({queued}).
        </p>
      )}
    </section>
  );
}

interface LockTableProps {
  readonly locks: readonly LoginLock[] | null;
  readonly busy: boolean;
  readonly unlocking: string | null;
  readonly onUnlock: (email: string) => void;
}

function LockTable({ locks, busy, unlocking, onUnlock }: LockTableProps) {
  if (locks === null) return busy ? <p aria-busy="true">Loading locks…</p> : null;
  if (locks.length === 0) return <p class="empty">No account or address is locked right now.</p>;
  return (
    <table class="data" id="login-locks" aria-labelledby="locks-title" aria-busy={busy}>
      <thead>
        <tr>
          <th scope="col">Locked</th>
          <th scope="col">Kind</th>
          <th scope="col">Failures</th>
          <th scope="col">Ends in</th>
          <th scope="col">
            <span class="visually-hidden">Action</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {locks.map((lock) => {
          const subject = subjectOf(lock);
          return (
            <tr key={lockKey(lock)} data-lock={subject.text}>
              <td data-label="Locked" class="subject">
                {subject.text}
              </td>
              <td data-label="Kind">{controlLabel(lock.control)}</td>
              <td data-label="Failures">{failuresText(lock.failures)}</td>
              <td data-label="Ends in">{duration(lock.retryAfter)}</td>
              <td class="action">
                {subject.email !== null ? (
                  <button
                    type="button"
                    aria-label={`Unlock ${subject.email}`}
                    disabled={unlocking !== null}
                    data-hand-off="unlock-status"
                    onClick={() => onUnlock(subject.email!)}
                  >
                    {unlocking === subject.email ? 'Unlocking…' : 'Unlock'}
                  </button>
                ) : (
                  <span class="hint">Ends by itself</span>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function EventTable({ events, busy }: { events: readonly SecurityEvent[]; busy: boolean }) {
  if (events.length === 0)
    return busy ? <p aria-busy="true">Loading events…</p> : <p class="empty">No security events yet.</p>;
  return (
    <table class="data" id="security-events" aria-labelledby="events-title" aria-busy={busy}>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Event</th>
          <th scope="col">Kind</th>
          <th scope="col">Account or address</th>
          <th scope="col">Server</th>
        </tr>
      </thead>
      <tbody>
        {events.map((event) => (
          <tr key={event.id} data-event-type={event.type}>
            <EventCells event={event} what="Event" actor={(id) => `admin ${id}`} />
            <td data-label="Kind">{controlLabel(event.control)}</td>
            <td data-label="Account or address" class="subject">
              {eventSubject(event)}
              {addressesText(event) !== null && <span class="hint"> (from {addressesText(event)})</span>}
            </td>
            <td data-label="Server">{event.instance}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
