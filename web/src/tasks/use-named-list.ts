// A list the page names things by (employees, clients), by id; reloaded after a pause if missing.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { ApiClient } from '../../../src/client/index.ts';
import type { LoadTroubleHandle } from '../shared/use-load-trouble.ts';
import type { Named } from './named-select.tsx';

/** The client's calls that list named things. */
export type NamedList = 'employees' | 'clients';

export function useNamedList<K extends NamedList>(
  client: ApiClient,
  list: K,
  trouble: Pick<LoadTroubleHandle, 'report' | 'resumed'>,
) {
  type Item = Awaited<ReturnType<ApiClient[K]>>[number];
  const [items, setItems] = useState<readonly Item[]>([]);
  const names = useMemo(() => new Map(items.map((item: Named) => [item.id, item.name])), [items]);
  const missing = items.length === 0;
  const { report, resumed } = trouble;

  // `resumed` is a dependency so that the end of a pause loads them again.
  useEffect(() => {
    if (!missing) return;
    client[list]().then((loaded) => setItems(loaded as readonly Item[]), report);
  }, [client, list, report, resumed, missing]);

  return { items, names };
}
