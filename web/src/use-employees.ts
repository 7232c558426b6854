// The employees tasks can be assigned to, and their names by id; loaded again after a pause if still missing.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { ApiClient, User } from '../../src/client/index.ts';
import type { LoadTroubleHandle } from './use-load-trouble.ts';

export function useEmployees(client: ApiClient, trouble: Pick<LoadTroubleHandle, 'report' | 'resumed'>) {
  const [employees, setEmployees] = useState<readonly User[]>([]);
  const names = useMemo(() => new Map(employees.map((e) => [e.id, e.name])), [employees]);
  const missing = employees.length === 0;
  const { report, resumed } = trouble;

  // `resumed` is a dependency so that the end of a pause loads them again.
  useEffect(() => {
    if (!missing) return;
    client.employees().then(setEmployees, report);
  }, [client, report, resumed, missing]);

  return { employees, names };
}
