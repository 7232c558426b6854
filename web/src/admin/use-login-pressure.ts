// Whether the server turns sign-ins away (docs/rules.md#the-login-gate), for the admin page.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiClient, LoginPressure } from '../../../src/client/index.ts';
import type { LoadTroubleHandle } from '../shared/use-load-trouble.ts';

/** Pressure comes and goes within a minute: the page looks again this often while it is open. */
export const PRESSURE_REFRESH_MS = 10_000;

export interface LoginPressureHandle {
  /** Null until the first answer. */
  readonly pressure: LoginPressure | null;
  readonly reload: () => void;
}

export function useLoginPressure(
  client: ApiClient,
  trouble: Pick<LoadTroubleHandle, 'report' | 'resumed'>,
): LoginPressureHandle {
  const [pressure, setPressure] = useState<LoginPressure | null>(null);
  const [version, setVersion] = useState(0);
  const reload = useCallback(() => setVersion((n) => n + 1), []);
  const { report, resumed } = trouble;

  useEffect(() => {
    let current = true;
    client.loginPressure().then(
      (answer) => current && setPressure(answer),
      (failure: unknown) => current && report(failure),
    );
    const timer = setTimeout(reload, PRESSURE_REFRESH_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [client, report, resumed, version, reload]);

  return { pressure, reload };
}
