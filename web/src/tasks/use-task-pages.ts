// The task list: filters, the page shown and paging through it; each change of place loads the page.
import { useEffect, useReducer, useState } from 'preact/hooks';
import type { ApiClient, TaskPage } from '../../../src/client/index.ts';
import type { LoadTroubleHandle } from '../shared/use-load-trouble.ts';
import {
  firstPage,
  type PageFilters,
  type PageMove,
  type Position,
  pageNumber,
  pageQuery,
  pagesReducer,
} from './task-pages.ts';

export function useTaskPages<F extends PageFilters>(
  client: ApiClient,
  initialFilters: F,
  trouble: Pick<LoadTroubleHandle, 'report' | 'loaded' | 'resumed'>,
) {
  const [position, move] = useReducer<Position<F>, PageMove<F>, F>(pagesReducer, initialFilters, firstPage);
  const [page, setPage] = useState<TaskPage | null>(null);
  const [loading, setLoading] = useState(true);
  const { report, loaded, resumed } = trouble;

  // `resumed` is a dependency so that the end of a pause loads the page again.
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    client
      .tasks(pageQuery(position), { signal: controller.signal })
      .then(
        (result) => {
          setPage(result);
          loaded();
        },
        (error) => {
          if (!controller.signal.aborted) report(error);
        },
      )
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
  }, [client, position, report, loaded, resumed]);

  const nextCursor = page?.nextCursor ?? null;
  return {
    filters: position.filters,
    page,
    tasks: page?.tasks ?? [],
    pageNumber: pageNumber(position),
    loading,
    hasNext: nextCursor !== null,
    applyFilters: (filters: F) => move({ type: 'filters-applied', filters }),
    next: () => nextCursor !== null && move({ type: 'next', cursor: nextCursor }),
    previous: () => move({ type: 'previous' }),
    reload: () => move({ type: 'reload' }),
  };
}
