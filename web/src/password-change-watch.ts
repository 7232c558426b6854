// Hears every 403 PASSWORD_CHANGE_REQUIRED, so that any call leads to the change-password view.
import type { ServerErrorCode } from '../../src/client/index.ts';

/** What every route but a few answers while a temporary password is still in use. */
const PASSWORD_CHANGE_REQUIRED: ServerErrorCode = 'PASSWORD_CHANGE_REQUIRED';

export interface PasswordChangeWatch {
  /** The fetch to give the API client: the page's own, listened to. */
  readonly fetch: typeof fetch;
  /** Calls `listener` on each such answer until the returned function is called. */
  readonly subscribe: (listener: () => void) => () => void;
}

/**
 * Wraps `base` (the browser's fetch) so that a 403 whose body's code is PASSWORD_CHANGE_REQUIRED
 * tells the listeners. The answer itself goes on unchanged to the client, which throws it as usual.
 */
export function watchPasswordChange(base: typeof fetch): PasswordChangeWatch {
  const listeners = new Set<() => void>();
  const watched: typeof fetch = async (input, init) => {
    const response = await base(input, init);
    if (response.status === 403 && listeners.size > 0) {
      // A copy is read, so that the client still reads the body itself.
      const body: unknown = await response
        .clone()
        .json()
        .catch(() => null);
      if ((body as { code?: unknown } | null)?.code === PASSWORD_CHANGE_REQUIRED)
        for (const listener of listeners) listener();
    }
    return response;
  };
  return {
    fetch: watched,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
