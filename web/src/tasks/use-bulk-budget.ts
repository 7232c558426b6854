// The bulk budget: read when the page opens, taken from every reassignment, and the countdown of a pause.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiClient, RateLimitState } from '../../../src/client/index.ts';
import { useCountdown } from '../shared/use-countdown.ts';
import { adoptBudget, bulkBudgetOf, cooledDown, holdUntil, UNKNOWN_BUDGET } from './bulk-budget.ts';

export interface BulkBudgetHandle {
  readonly budget: RateLimitState | null;
  /** Whole seconds until reassigning may start again; 0 when it may now. */
  readonly cooldown: number;
  /** How many pauses have ended. */
  readonly refills: number;
  readonly adopt: (reported: RateLimitState) => void;
  readonly hold: (until: number) => void;
}

export function useBulkBudget(client: ApiClient): BulkBudgetHandle {
  const [state, setState] = useState(UNKNOWN_BUDGET);
  const [refills, setRefills] = useState(0);
  const cooldown = useCountdown(state.cooldownUntil);

  const adopt = useCallback((reported: RateLimitState) => setState((s) => adoptBudget(s, reported)), []);
  const hold = useCallback((until: number) => setState((s) => holdUntil(s, until)), []);
  const refresh = useCallback(async () => {
    try {
      const bulk = bulkBudgetOf(await client.rateLimits(), Date.now());
      if (bulk) adopt(bulk);
    } catch {
      // Only informative: the next reassignment's headers report the budget anyway.
    }
  }, [client, adopt]);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  // The end of a pause: the budget is read again.
  useEffect(() => {
    if (state.cooldownUntil === null || cooldown > 0) return;
    setState(cooledDown);
    setRefills((count) => count + 1);
    void refresh();
  }, [state.cooldownUntil, cooldown, refresh]);

  return { budget: state.budget, cooldown, refills, adopt, hold };
}
