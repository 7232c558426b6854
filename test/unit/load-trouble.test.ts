// A failed load of the Tasks page (web/src/shared/load-trouble.ts): signed out, paused, or an error.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/client/index.ts';
import { NO_TROUBLE, sortLoadFailure, troubleReducer } from '../../web/src/shared/load-trouble.ts';

const NOW = 1_700_000_000_000;
const rateLimit = (retryAfter: number | null) => ({
  policy: 'api-authenticated',
  limit: 1000,
  windowSeconds: 900,
  remaining: 0,
  resetSeconds: 30,
  retryAfter,
  receivedAt: NOW,
});

describe('load trouble', () => {
  it('sends the page back to Login when the session is gone', () => {
    const error = new ApiError({ status: 401, code: 'UNAUTHENTICATED', message: 'Sign in.' });
    assert.deepEqual(sortLoadFailure(error), {
      kind: 'signed-out',
      notice: 'Your session has ended. Sign in again.',
    });
  });

  it('pauses until Retry-After on a 429, counted from when the response arrived', () => {
    const error = new ApiError({
      status: 429,
      code: 'API_RATE_LIMIT_AUTHENTICATED',
      message: 'Too many.',
      retryAfter: 30,
      rateLimit: rateLimit(30),
    });
    const failure = sortLoadFailure(error);
    assert.equal(failure.kind, 'paused');
    assert.equal(failure.kind === 'paused' && failure.until, NOW + 30_000);
  });

  it('pauses until Retry-After while the database is away, and says so', () => {
    const error = new ApiError({
      status: 503,
      code: 'DATABASE_UNAVAILABLE',
      message: 'The database cannot be reached right now.',
      retryAfter: 2,
    });
    const before = Date.now();
    const failure = sortLoadFailure(error);
    assert.equal(failure.kind, 'paused');
    if (failure.kind !== 'paused') return;
    assert.equal(failure.text, 'The portal cannot reach its database for a moment.');
    assert.ok(failure.until >= before + 2_000 && failure.until <= Date.now() + 2_000);
  });

  it('shows an error for a 429 that says nothing of how long to wait, and for anything else', () => {
    const vague = new ApiError({ status: 429, code: 'API_RATE_LIMIT_AUTHENTICATED', message: 'Too many.' });
    assert.equal(sortLoadFailure(vague).kind, 'failed');
    const down = new ApiError({ status: 0, code: 'NETWORK_ERROR', message: 'Unreachable.' });
    assert.deepEqual(sortLoadFailure(down), {
      kind: 'failed',
      text: 'The server could not be reached. Check your connection and try again.',
    });
    assert.equal(sortLoadFailure(new TypeError('boom')).kind, 'failed');
  });

  it('keeps a pause and an error apart: a load clears the error, the end of the pause the pause', () => {
    const paused = troubleReducer(NO_TROUBLE, {
      type: 'failed',
      failure: { kind: 'paused', text: 'Paused.', until: NOW },
    });
    const both = troubleReducer(paused, { type: 'failed', failure: { kind: 'failed', text: 'Broken.' } });
    assert.deepEqual(both, { pause: { text: 'Paused.', until: NOW }, error: 'Broken.' });
    assert.deepEqual(troubleReducer(both, { type: 'loaded' }), { pause: both.pause, error: null });
    assert.deepEqual(troubleReducer(both, { type: 'resumed' }), { pause: null, error: 'Broken.' });
  });

  it('returns the same state when there is nothing to clear, so the page does not render again', () => {
    assert.equal(troubleReducer(NO_TROUBLE, { type: 'loaded' }), NO_TROUBLE);
    assert.equal(troubleReducer(NO_TROUBLE, { type: 'resumed' }), NO_TROUBLE);
  });
});
