// The two cells every security-event table starts with: when it happened, and what.
import type { SecurityEvent } from '../../../src/client/index.ts';
import { EVENT_LABELS, repeatsText } from './admin-wording.ts';

interface Props {
  readonly event: SecurityEvent;
  /** The heading of the "what" column, repeated as its label on narrow screens. */
  readonly what: string;
  /** How an admin who did it is named; null: not said (the owner's own action). */
  readonly actor: (actorId: number) => string | null;
}

export function EventCells({ event, what, actor }: Props) {
  const repeats = repeatsText(event);
  return (
    <>
      <td data-label="Time">
        <time dateTime={event.at}>{new Date(event.at).toLocaleString()}</time>
      </td>
      <td data-label={what}>
        {EVENT_LABELS[event.type] ?? event.type}
        {repeats !== null && `: ${repeats}`}
        {event.actorId !== null && actor(event.actorId) !== null && (
          <span class="hint"> ({actor(event.actorId)})</span>
        )}
        {event.control === 'session-limit' && (
          <span class="hint">
            {' '}
            (the least recently used: a new sign-in went past the sessions an account keeps)
          </span>
        )}
      </td>
    </>
  );
}
