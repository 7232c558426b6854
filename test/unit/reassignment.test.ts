// One bulk reassignment as the page shows it (web/src/reassignment.ts): busy, outcome, error, and refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, type RateLimitState } from '../../src/client/index.ts';
import { IDLE, type Outcome, reassignReducer, sortBulkFailure } from '../../web/src/reassignment.ts';

const NOW = 1_700_000_000_000;
const exhausted: RateLimitState = {
  policy: 'task-bulk',
  limit: 30,
  windowSeconds: 900,
  remaining: 0,
  resetSeconds: 42,
  retryAfter: 42,
  receivedAt: NOW,
};
const outcome: Outcome = {
  succeeded: 1,
  failed: 0,
  results: [{ taskId: 1, status: 'reassigned' }],
  assignee: 'Bob Nguyen',
};

describe('reassignment', () => {
  it('clears the last outcome, error and note when one starts', () => {
    const before = { busy: false, outcome, error: 'Old.', note: 'You can reassign again.' };
    assert.deepEqual(reassignReducer(before, { type: 'started' }), { ...IDLE, busy: true });
  });

  it('shows the outcome when it went through, and the error when it did not', () => {
    const busy = reassignReducer(IDLE, { type: 'started' });
    assert.deepEqual(reassignReducer(busy, { type: 'succeeded', outcome }), { ...IDLE, outcome });
    assert.deepEqual(reassignReducer(busy, { type: 'failed', error: 'Refused.' }), {
      ...IDLE,
      error: 'Refused.',
    });
  });

  it('says reassigning may start again when the budget refills, dropping the refusal', () => {
    const refused = { ...IDLE, error: 'You have used all your bulk reassignments for now.' };
    assert.deepEqual(reassignReducer(refused, { type: 'refilled' }), {
      ...IDLE,
      note: 'You can reassign again.',
    });
  });

  it('holds reassigning until Retry-After on a bulk 429, and keeps the budget it reported', () => {
    const error = new ApiError({
      status: 429,
      code: 'TASK_BULK_RATE_LIMIT',
      message: 'Too many.',
      retryAfter: 42,
      rateLimit: exhausted,
    });
    assert.deepEqual(sortBulkFailure(error), {
      kind: 'refused',
      text: 'You have used all your bulk reassignments for now.',
      rateLimit: exhausted,
      holdUntil: NOW + 42_000,
    });
  });

  it('holds nothing for other refusals', () => {
    const error = new ApiError({ status: 422, code: 'ASSIGNEE_NOT_FOUND', message: 'No such employee.' });
    const failure = sortBulkFailure(error);
    assert.equal(failure.kind === 'refused' && failure.holdUntil, null);
    assert.equal(sortBulkFailure(new TypeError('boom')).kind, 'refused');
  });

  it('sends the page back to Login when the session is gone', () => {
    const error = new ApiError({ status: 401, code: 'UNAUTHENTICATED', message: 'Sign in.' });
    assert.deepEqual(sortBulkFailure(error), {
      kind: 'signed-out',
      notice: 'Your session has ended. Sign in again.',
      rateLimit: null,
    });
  });
});
