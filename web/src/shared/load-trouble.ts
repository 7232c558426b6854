// What a failed load means for the page: signed out, paused (a rate limit, the database), or an error.
import { isApiError } from '../../../src/client/index.ts';
import { retryDeadline } from './deadline.ts';
import { describeError } from './wording.ts';

export type LoadFailure =
  | { readonly kind: 'signed-out'; readonly notice: string }
  /** A generic-budget 429 or the database away: the page keeps what it shows and waits, instead of breaking. */
  | { readonly kind: 'paused'; readonly text: string; readonly until: number }
  | { readonly kind: 'failed'; readonly text: string };

/** Sorts the error of a load (tasks, employees) into what the page does about it. */
export function sortLoadFailure(error: unknown): LoadFailure {
  const text = describeError(error);
  if (isApiError(error, 'UNAUTHENTICATED')) return { kind: 'signed-out', notice: text };
  // A rate limit or the database away (a 503 with Retry-After): both pass, so the page waits them out.
  const waitable = isApiError(error) && (error.status === 429 || isApiError(error, 'DATABASE_UNAVAILABLE'));
  const until = waitable ? retryDeadline(error) : null;
  return until === null ? { kind: 'failed', text } : { kind: 'paused', text, until };
}

export interface LoadTrouble {
  readonly pause: { readonly text: string; readonly until: number } | null;
  readonly error: string | null;
}

export const NO_TROUBLE: LoadTrouble = { pause: null, error: null };

export type TroubleEvent =
  | { readonly type: 'failed'; readonly failure: Exclude<LoadFailure, { kind: 'signed-out' }> }
  /** The task list loaded: its error banner goes (a pause runs to its end). */
  | { readonly type: 'loaded' }
  /** The pause's countdown reached zero. */
  | { readonly type: 'resumed' };

export function troubleReducer(state: LoadTrouble, event: TroubleEvent): LoadTrouble {
  switch (event.type) {
    case 'failed': {
      const { failure } = event;
      return failure.kind === 'paused'
        ? { ...state, pause: { text: failure.text, until: failure.until } }
        : { ...state, error: failure.text };
    }
    case 'loaded':
      return state.error === null ? state : { ...state, error: null };
    case 'resumed':
      return state.pause === null ? state : { ...state, pause: null };
  }
}
