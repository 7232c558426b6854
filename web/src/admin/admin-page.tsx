// The Admin page: the login locks in force, each account unlocked with one click, and recent security events.
import { useCallback } from 'preact/hooks';
import type { LoginLock, LoginPressure, SecurityEvent } from '../../../src/client/index.ts';
import { DataTable } from '../shared/data-table.tsx';
import { EventsPanel } from '../shared/events-panel.tsx';
import { whileBusy } from '../shared/focus-hand-off.ts';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { Page, type PageProps } from '../shared/page.tsx';
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

export function AdminPage({ client, user, onSignedOut }: PageProps) {
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
    <Page id="admin" title={VIEW_LABELS.admin}>
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

      <EventsPanel
        id="events"
        title="Recent security events"
        noun="events"
        events={events}
        hint="Locks that started, unlocks by an admin and refused known devices, newest first."
      >
        <EventTable events={events.events} busy={events.loading} />
      </EventsPanel>
    </Page>
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
    <DataTable
      id="login-locks"
      labelledBy="locks-title"
      busy={busy}
      columns={['Locked', 'Kind', 'Failures', 'Ends in']}
      actions="Action"
    >
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
    </DataTable>
  );
}

function EventTable({ events, busy }: { events: readonly SecurityEvent[]; busy: boolean }) {
  if (events.length === 0)
    return busy ? <p aria-busy="true">Loading events…</p> : <p class="empty">No security events yet.</p>;
  return (
    <DataTable
      id="security-events"
      labelledBy="events-title"
      busy={busy}
      columns={['Time', 'Event', 'Kind', 'Account or address', 'Server']}
    >
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
    </DataTable>
  );
}
