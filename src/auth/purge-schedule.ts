// A purge of what has expired (sessions, security events): once at start, then every interval, never holding
// the process open.

export interface PurgeSchedule {
  /** Stops the timer and waits for a purge in progress, so the database can close after it. */
  stop(): Promise<void>;
}

/**
 * Runs `purge` now and every `intervalMs`. The timer is unref'd (it never keeps the process
 * alive), runs never overlap, and a failure is handed to `onError` and retried at the next tick.
 * Every instance purges: the delete is idempotent, so no coordination is needed.
 */
export function schedulePurge(
  purge: () => Promise<number>,
  onError: (error: unknown) => void,
  intervalMs: number,
): PurgeSchedule {
  let running: Promise<void> | null = null;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    running = purge()
      .then(
        () => {},
        (error: unknown) => {
          if (!stopped) onError(error);
        },
      )
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  run();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
