// "Recent activity": the security events about the signed-in account, newest first, older ones on request.
import type { SecurityEvent } from '../../../src/client/index.ts';
import { addressesText } from '../admin/admin-wording.ts';
import { EventCells } from '../admin/event-cells.tsx';
import { whileBusy } from '../shared/focus-hand-off.ts';
import type { SecurityEventsHandle } from '../shared/use-security-events.ts';

/** `self`: the signed-in user's id (what they did themselves is not marked as an admin's). */
export function ActivityPanel({ events, self }: { events: SecurityEventsHandle; self: number }) {
  return (
    <section class="panel" aria-labelledby="activity-title">
      <div class="panel-head">
        <h2 id="activity-title" tabIndex={-1}>
          Recent activity
        </h2>
        <button type="button" class="secondary" {...whileBusy(events.loading, events.refresh)}>
          Refresh activity
        </button>
      </div>
      <p class="hint">
        Sign-ins, failed sign-ins, password changes and what an admin changed on your account, newest first.
        If you do not recognise something, change your password and end your other sessions.
      </p>
      <ActivityTable events={events.events} busy={events.loading} self={self} />
      {events.nextCursor !== null && (
        <div class="pager">
          <button type="button" data-hand-off="activity-title" {...whileBusy(events.loading, events.older)}>
            Show older activity
          </button>
        </div>
      )}
    </section>
  );
}

function ActivityTable({
  events,
  busy,
  self,
}: {
  events: readonly SecurityEvent[];
  busy: boolean;
  self: number;
}) {
  if (events.length === 0)
    return busy ? <p aria-busy="true">Loading your activity…</p> : <p class="empty">No activity yet.</p>;
  return (
    <table class="data" id="account-activity" aria-labelledby="activity-title" aria-busy={busy}>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">What happened</th>
          <th scope="col">From address</th>
        </tr>
      </thead>
      <tbody>
        {events.map((event) => (
          <tr key={event.id} data-event-type={event.type}>
            <EventCells
              event={event}
              what="What happened"
              actor={(id) => (id === self ? null : 'by an admin')}
            />
            <td data-label="From address" class="subject">
              {addressesText(event) ?? event.address ?? '—'}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
