// The bulk budget as the page knows it (web/src/tasks/bulk-budget.ts): states and their pause.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ControlReport, RateLimitState } from '../../src/client/index.ts';
import {
  adoptBudget,
  bulkBudgetOf,
  cooledDown,
  holdUntil,
  UNKNOWN_BUDGET,
} from '../../web/src/tasks/bulk-budget.ts';

const NOW = 1_700_000_000_000;
const state = (remaining: number, resetSeconds: number, receivedAt = NOW): RateLimitState => ({
  policy: 'task-bulk',
  limit: 30,
  windowSeconds: 900,
  remaining,
  resetSeconds,
  retryAfter: null,
  receivedAt,
});

describe('bulk budget', () => {
  it('takes in a budget with some left without pausing', () => {
    const next = adoptBudget(UNKNOWN_BUDGET, state(27, 900));
    assert.deepEqual(next, { budget: state(27, 900), cooldownUntil: null });
  });

  it('pauses until an exhausted budget refills', () => {
    const next = adoptBudget(UNKNOWN_BUDGET, state(0, 42));
    assert.equal(next.cooldownUntil, NOW + 42_000);
  });

  it('never shortens a pause, whether from a report or a Retry-After', () => {
    const long = holdUntil(UNKNOWN_BUDGET, NOW + 60_000);
    assert.equal(adoptBudget(long, state(0, 10)).cooldownUntil, NOW + 60_000);
    assert.equal(holdUntil(long, NOW + 5_000).cooldownUntil, NOW + 60_000);
    assert.equal(holdUntil(long, NOW + 90_000).cooldownUntil, NOW + 90_000);
    // A budget with some left again does not end a pause by itself: its countdown does.
    assert.equal(adoptBudget(long, state(3, 900)).cooldownUntil, NOW + 60_000);
  });

  it('ends the pause, keeping the last budget reported', () => {
    const paused = adoptBudget(UNKNOWN_BUDGET, state(0, 42));
    assert.deepEqual(cooledDown(paused), { budget: state(0, 42), cooldownUntil: null });
  });

  it('reads the task-bulk entry of GET /api/rate-limits as a header state', () => {
    const reports: ControlReport[] = [
      {
        control: 'api-authenticated',
        code: 'API_RATE_LIMIT_AUTHENTICATED',
        mode: 'enforce',
        limit: 1000,
        windowSeconds: 900,
        remaining: 990,
        resetSeconds: 0,
      },
      {
        control: 'task-bulk',
        code: 'TASK_BULK_RATE_LIMIT',
        mode: 'enforce',
        limit: 30,
        windowSeconds: 900,
        remaining: 0,
        resetSeconds: 42,
      },
    ];
    assert.deepEqual(bulkBudgetOf(reports, NOW), state(0, 42));
    assert.equal(bulkBudgetOf(reports.slice(0, 1), NOW), null);
  });
});
