// The admin page's security events: the newest page, then older ones appended, each event once.
import type { SecurityEvent, SecurityEventPage } from '../../../src/client/index.ts';

export interface EventList {
  readonly events: readonly SecurityEvent[];
  /** Where the older events continue; null once the oldest has been shown. */
  readonly nextCursor: string | null;
  readonly loading: boolean;
}

export const NO_EVENTS: EventList = { events: [], nextCursor: null, loading: true };

export type EventListChange =
  | { readonly type: 'loading' }
  /** The newest page: replaces what was shown (a refresh). */
  | { readonly type: 'newest'; readonly page: SecurityEventPage }
  /**
   * An older page, asked for `after` a cursor, appended; an event already shown (recorded while
   * paging) is not repeated. A page asked for before a refresh replaced the list is dropped.
   */
  | { readonly type: 'older'; readonly after: string; readonly page: SecurityEventPage }
  | { readonly type: 'failed' };

export function eventListReducer(state: EventList, change: EventListChange): EventList {
  switch (change.type) {
    case 'loading':
      return { ...state, loading: true };
    case 'newest':
      return { events: change.page.events, nextCursor: change.page.nextCursor, loading: false };
    case 'older': {
      if (change.after !== state.nextCursor) return state;
      const shown = new Set(state.events.map((event) => event.id));
      const added = change.page.events.filter((event) => !shown.has(event.id));
      return { events: [...state.events, ...added], nextCursor: change.page.nextCursor, loading: false };
    }
    case 'failed':
      return { ...state, loading: false };
  }
}
