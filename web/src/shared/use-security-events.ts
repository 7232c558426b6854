// Recent security events (the admin's, one's own): the newest page, older ones on demand.
import { useCallback, useEffect, useReducer, useState } from 'preact/hooks';
import type { SecurityEventPage } from '../../../src/client/index.ts';
import { type EventList, eventListReducer, NO_EVENTS } from './security-event-pages.ts';
import type { LoadTroubleHandle } from './use-load-trouble.ts';

/** The call that reads one page: the newest without a cursor, older ones after it. Keep it stable (useCallback). */
export type EventPageLoader = (cursor: string | undefined) => Promise<SecurityEventPage>;

export interface SecurityEventsHandle extends EventList {
  readonly refresh: () => void;
  /** Appends the next older page; does nothing on the last one. */
  readonly older: () => void;
}

export function useSecurityEvents(
  load: EventPageLoader,
  trouble: Pick<LoadTroubleHandle, 'report' | 'resumed'>,
): SecurityEventsHandle {
  const [list, dispatch] = useReducer(eventListReducer, NO_EVENTS);
  const [version, setVersion] = useState(0);
  const refresh = useCallback(() => setVersion((n) => n + 1), []);
  const { report, resumed } = trouble;

  // `resumed` is a dependency so that the end of a pause loads them again.
  useEffect(() => {
    let current = true;
    dispatch({ type: 'loading' });
    load(undefined).then(
      (page) => current && dispatch({ type: 'newest', page }),
      (failure: unknown) => {
        if (!current) return;
        dispatch({ type: 'failed' });
        report(failure);
      },
    );
    return () => {
      current = false;
    };
  }, [load, report, resumed, version]);

  const older = () => {
    const cursor = list.nextCursor;
    if (cursor === null || list.loading) return;
    dispatch({ type: 'loading' });
    load(cursor).then(
      (page) => dispatch({ type: 'older', after: cursor, page }),
      (failure: unknown) => {
        dispatch({ type: 'failed' });
        report(failure);
      },
    );
  };

  return { ...list, refresh, older };
}
