// What the page says to people: durations, the bulk budget, and every error in plain words.
import { ApiError, BULK_MAX_TASKS, type TaskStatus } from '../../../src/client/index.ts';

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

/** 75 → "1 minute 15 seconds"; 0 → "a moment". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s === 0) return 'a moment';
  if (s < 60) return plural(s, 'second');
  if (s < 3600) {
    const rest = s % 60;
    return rest
      ? `${plural(Math.floor(s / 60), 'minute')} ${plural(rest, 'second')}`
      : plural(s / 60, 'minute');
  }
  const minutes = Math.floor((s % 3600) / 60);
  const hours = plural(Math.floor(s / 3600), 'hour');
  return minutes ? `${hours} ${plural(minutes, 'minute')}` : hours;
}

/** 900 → "15-minute", as in "this 15-minute window". */
export function windowLength(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}-hour`;
  if (seconds % 60 === 0) return `${seconds / 60}-minute`;
  return `${seconds}-second`;
}

/** "27 of 30 bulk reassignments left in this 15-minute window." */
export function budgetSentence(budget: {
  remaining: number;
  limit: number | null;
  windowSeconds: number | null;
}): string {
  const count = budget.limit === null ? `${budget.remaining}` : `${budget.remaining} of ${budget.limit}`;
  const window = budget.windowSeconds === null ? '' : ` in this ${windowLength(budget.windowSeconds)} window`;
  // "1 of 30 bulk reassignments": the noun counts the budget, not what is left of it.
  const noun = (budget.limit ?? budget.remaining) === 1 ? 'reassignment' : 'reassignments';
  return `${count} bulk ${noun} left${window}.`;
}

/** What the task list's status line says: "50 tasks on page 2." or that it is loading. */
export function resultsSentence(count: number, page: number, loading: boolean): string {
  return loading ? `Loading page ${page}…` : `${plural(count, 'task')} on page ${page}.`;
}

/** A label for every task status, and only for those: the type fails when the client's list changes. */
export const STATUS_LABELS = {
  open: 'Open',
  in_progress: 'In progress',
  done: 'Done',
} as const satisfies Record<TaskStatus, string>;

export const FAILURE_REASONS: Record<string, string> = {
  NOT_FOUND: 'no such task (it may have been deleted)',
  DUPLICATE: 'listed twice; the first one was used',
};

/**
 * A reassignment whose answer never came (the client's own retries spent): it may have been
 * applied. Pressing Reassign again sends the same request under the same Idempotency-Key.
 */
export const BULK_FATE_UNKNOWN =
  'The connection broke before the server answered, so this reassignment may already have been applied. ' +
  'Press Reassign again: it is sent as the same request, and the server applies it only once.';

/** The answer to a reassignment sent again that had already been applied: the server's stored result. */
export const BULK_APPLIED_ONCE =
  'This reassignment had already been applied before the connection broke. It was applied once, not twice.';

/** A sentence for any error a call can throw; rate limits are worded where their countdown is shown. */
export function describeError(error: unknown): string {
  if (!(error instanceof ApiError)) return 'Something unexpected went wrong. Reload the page and try again.';
  switch (error.code) {
    case 'INVALID_CREDENTIALS':
      return 'The email or password is not correct.';
    case 'LOGIN_RATE_LIMIT':
      // The headers name the control that refused: the account's failures or the network's.
      if (error.rateLimit?.policy === 'login-account')
        return 'Too many failed sign-in attempts for this account.';
      if (error.rateLimit?.policy === 'login-ip')
        return 'Too many failed sign-in attempts from your network.';
      return 'Too many failed sign-in attempts.';
    case 'API_RATE_LIMIT_AUTHENTICATED':
      return 'You have made too many requests in a short time, so the portal is paused for your account.';
    case 'API_RATE_LIMIT_UNAUTHENTICATED':
      return 'Too many requests have come from your network in a short time, so the portal is paused.';
    case 'TASK_BULK_RATE_LIMIT':
      return 'You have used all your bulk reassignments for now.';
    case 'UNAUTHENTICATED':
      return 'Your session has ended. Sign in again.';
    case 'CSRF_INVALID':
      return 'This page is out of date (you may have signed in or out in another tab). Reload it and try again.';
    case 'ASSIGNEE_NOT_FOUND':
      return 'That person can no longer be assigned tasks. Choose someone else.';
    case 'TASK_BULK_TOO_LARGE':
      return `A reassignment can include at most ${BULK_MAX_TASKS} tasks.`;
    case 'IDEMPOTENCY_KEY_IN_FLIGHT':
      return 'Your reassignment is still being processed. Wait a moment, then press Reassign again.';
    case 'NETWORK_ERROR':
      return 'The server could not be reached. Check your connection and try again.';
    case 'LOGIN_BUSY':
      return 'Sign-in is very busy right now, so your password was not checked yet.';
    case 'DATABASE_UNAVAILABLE':
      return 'The portal cannot reach its database for a moment.';
    case 'RATE_LIMIT_STORE_UNAVAILABLE':
    case 'INTERNAL_ERROR':
      return 'Something went wrong on our side. Try again in a moment.';
    default:
      return error.message;
  }
}
