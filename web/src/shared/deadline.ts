// When a refused call may be tried again, as a Date.now()-style time (for useCountdown).
import { ApiError, type RateLimitState } from '../../../src/client/index.ts';

/** The end of the wait an error asks for (Retry-After), or null when it asks for none. */
export function retryDeadline(error: unknown): number | null {
  if (!(error instanceof ApiError) || error.retryAfter === null) return null;
  return (error.rateLimit?.receivedAt ?? Date.now()) + error.retryAfter * 1000;
}

/** When a budget with nothing left admits again, or null while it still has some. */
export function exhaustedUntil(state: RateLimitState): number | null {
  return state.remaining === 0 && state.resetSeconds > 0
    ? state.receivedAt + state.resetSeconds * 1000
    : null;
}
