// One bulk reassignment as the page shows it (web/src/tasks/reassignment.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, type RateLimitState } from '../../src/client/index.ts';
import { BULK_FATE_UNKNOWN } from '../../web/src/shared/wording.ts';
import {
  fateUnknown,
  IDLE,
  keyFor,
  type Outcome,
  reassignReducer,
  sortBulkFailure,
} from '../../web/src/tasks/reassignment.ts';

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
  replayed: false,
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

  it('sends a new key per reassignment, and the pending key only for the same tasks and assignee', () => {
    let made = 0;
    const fresh = () => `new-${++made}`;
    assert.equal(keyFor(null, [1, 2], 3, fresh), 'new-1');
    const pending = { key: 'kept', taskIds: [1, 2], assigneeId: 3 };
    assert.equal(keyFor(pending, [1, 2], 3, fresh), 'kept', 'the same reassignment, sent again');
    assert.equal(keyFor(pending, [1, 2], 4, fresh), 'new-2', 'another assignee');
    assert.equal(keyFor(pending, [2, 1], 3, fresh), 'new-3', 'the tasks in another order');
    assert.equal(keyFor(pending, [1, 2, 5], 3, fresh), 'new-4', 'more tasks');
  });

  it('tells a reassignment that may have been applied (no answer, 502, 503, 504, in flight) from a refusal', () => {
    const unknown = [
      new ApiError({ status: 0, code: 'NETWORK_ERROR', message: 'unreachable' }),
      new ApiError({ status: 502, code: 'UNEXPECTED_RESPONSE', message: 'Bad Gateway' }),
      new ApiError({ status: 503, code: 'DATABASE_UNAVAILABLE', message: 'away', retryAfter: 2 }),
      new ApiError({ status: 504, code: 'UNEXPECTED_RESPONSE', message: 'Gateway Timeout' }),
      new ApiError({ status: 409, code: 'IDEMPOTENCY_KEY_IN_FLIGHT', message: 'busy', retryAfter: 1 }),
    ];
    for (const error of unknown) {
      assert.ok(fateUnknown(error), error.code);
      assert.deepEqual(sortBulkFailure(error), { kind: 'unknown', text: BULK_FATE_UNKNOWN, rateLimit: null });
    }
    assert.match(BULK_FATE_UNKNOWN, /applies it only once/);
    assert.doesNotMatch(BULK_FATE_UNKNOWN, /try again\?/i);
    for (const error of [
      new ApiError({ status: 422, code: 'ASSIGNEE_NOT_FOUND', message: 'no' }),
      new ApiError({ status: 500, code: 'INTERNAL_ERROR', message: 'no' }),
      new TypeError('boom'),
    ])
      assert.equal(fateUnknown(error), false);
  });
});
