// "Recent activity": the security events about the signed-in account, newest first, older ones on request.
import type { SecurityEvent } from '../../../src/client/index.ts';
import { addressesText } from '../admin/admin-wording.ts';
import { EventCells } from '../admin/event-cells.tsx';
import { DataTable } from '../shared/data-table.tsx';
import { EventsPanel } from '../shared/events-panel.tsx';
import type { SecurityEventsHandle } from '../shared/use-security-events.ts';

/** `self`: the signed-in user's id (what they did themselves is not marked as an admin's). */
export function ActivityPanel({ events, self }: { events: SecurityEventsHandle; self: number }) {
  return (
    <EventsPanel
      id="activity"
      title="Recent activity"
      noun="activity"
      events={events}
      hint="Sign-ins, failed sign-ins, password changes and what an admin changed on your account, newest first. If you do not recognise something, change your password and end your other sessions."
    >
      <ActivityTable events={events.events} busy={events.loading} self={self} />
    </EventsPanel>
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
    <DataTable
      id="account-activity"
      labelledBy="activity-title"
      busy={busy}
      columns={['Time', 'What happened', 'From address']}
    >
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
    </DataTable>
  );
}
