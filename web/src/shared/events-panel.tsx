// A panel of security events (the Admin page's, the Account page's activity): newest first, older ones on
// request.
import type { ComponentChildren } from 'preact';
import { whileBusy } from './focus-hand-off.ts';
import type { SecurityEventsHandle } from './use-security-events.ts';

interface Props {
  /** The heading is `${id}-title`; Show older hands focus to it when it goes with the last page. */
  readonly id: string;
  readonly title: string;
  /** What the buttons name: "Refresh events", "Show older events". */
  readonly noun: string;
  readonly events: SecurityEventsHandle;
  /** What the events are, under the heading. */
  readonly hint: ComponentChildren;
  /** The events' table. */
  readonly children: ComponentChildren;
}

export function EventsPanel({ id, title, noun, events, hint, children }: Props) {
  const titleId = `${id}-title`;
  return (
    <section class="panel" aria-labelledby={titleId}>
      <div class="panel-head">
        <h2 id={titleId} tabIndex={-1}>
          {title}
        </h2>
        <button type="button" class="secondary" {...whileBusy(events.loading, events.refresh)}>
          {`Refresh ${noun}`}
        </button>
      </div>
      <p class="hint">{hint}</p>
      {children}
      {events.nextCursor !== null && (
        <div class="pager">
          <button type="button" data-hand-off={titleId} {...whileBusy(events.loading, events.older)}>
            {`Show older ${noun}`}
          </button>
        </div>
      )}
    </section>
  );
}
