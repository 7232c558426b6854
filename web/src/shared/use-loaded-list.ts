// A list the page loads from the API: reloaded on request and after a pause, failures reported.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { LoadTroubleHandle } from './use-load-trouble.ts';

export interface LoadedList<T> {
  /** Null until the first load answers. */
  readonly list: readonly T[] | null;
  /** Replaces what is shown until the next load answers (an item changed or gone at once). */
  readonly setList: (change: (shown: readonly T[] | null) => readonly T[] | null) => void;
  readonly loading: boolean;
  readonly reload: () => void;
}

/** `load` must keep its identity between renders (a `useCallback` or a stable method): a new one loads again. */
export function useLoadedList<T>(
  load: () => Promise<readonly T[]>,
  trouble: Pick<LoadTroubleHandle, 'report' | 'resumed'> & Partial<Pick<LoadTroubleHandle, 'loaded'>>,
): LoadedList<T> {
  const [list, setList] = useState<readonly T[] | null>(null);
  const [loading, setLoading] = useState(true);
  const [version, setVersion] = useState(0);
  const reload = useCallback(() => setVersion((n) => n + 1), []);
  const { report, resumed, loaded } = trouble;

  // `resumed` is a dependency so that the end of a pause loads it again.
  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (answer) => {
        if (!current) return;
        setList(answer);
        setLoading(false);
        loaded?.();
      },
      (failure: unknown) => {
        if (!current) return;
        setLoading(false);
        report(failure);
      },
    );
    return () => {
      current = false;
    };
  }, [load, report, loaded, resumed, version]);

  return { list, setList, loading, reload };
}
