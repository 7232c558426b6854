// Failed loads of the page's data: back to Login, a paused page with its countdown, or an error banner.
import { useCallback, useEffect, useReducer, useState } from 'preact/hooks';
import { NO_TROUBLE, sortLoadFailure, troubleReducer } from './load-trouble.ts';
import { useCountdown } from './use-countdown.ts';

export interface LoadTroubleHandle {
  readonly pause: { readonly text: string; readonly until: number } | null;
  /** Whole seconds left in the pause. */
  readonly pauseLeft: number;
  readonly error: string | null;
  /** How many pauses have ended: loads depend on it to run again when one does. */
  readonly resumed: number;
  /** Tells the page a load failed. */
  readonly report: (error: unknown) => void;
  /** Tells the page the task list loaded. */
  readonly loaded: () => void;
}

/** `onSignedOut` gets the notice for the Login page when a load finds the session gone. */
export function useLoadTrouble(onSignedOut: (notice: string) => void): LoadTroubleHandle {
  const [state, dispatch] = useReducer(troubleReducer, NO_TROUBLE);
  const [resumed, setResumed] = useState(0);
  const pauseLeft = useCountdown(state.pause?.until ?? null);

  const report = useCallback(
    (error: unknown) => {
      const failure = sortLoadFailure(error);
      if (failure.kind === 'signed-out') onSignedOut(failure.notice);
      else dispatch({ type: 'failed', failure });
    },
    [onSignedOut],
  );
  const loaded = useCallback(() => dispatch({ type: 'loaded' }), []);

  // The end of a pause: what the rate limit refused loads again.
  useEffect(() => {
    if (state.pause === null || pauseLeft > 0) return;
    dispatch({ type: 'resumed' });
    setResumed((count) => count + 1);
  }, [state.pause, pauseLeft]);

  return { pause: state.pause, pauseLeft, error: state.error, resumed, report, loaded };
}
