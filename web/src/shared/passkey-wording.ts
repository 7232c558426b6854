// What the portal says when a passkey ceremony or a passkey route does not succeed, in plain words.
import { ApiError, PASSKEYS_MAX } from '../../../src/client/index.ts';
import { describeError } from './wording.ts';

/** A refusal of the browser's (cancelled, a passkey already on this device) or of the server's. */
export function describePasskeyError(error: unknown): string {
  if (error instanceof ApiError) {
    switch (error.code) {
      case 'INVALID_CREDENTIALS':
        return 'That passkey could not sign you in. It may have been removed, or the request expired: try again.';
      case 'REAUTH_REQUIRED':
        return 'Enter your password again to change your passkeys.';
      case 'PASSKEY_LIMIT':
        return `You already have ${PASSKEYS_MAX} passkeys. Remove one before adding another.`;
      case 'PASSKEY_INVALID':
        return 'The passkey could not be verified, or it is already registered. Try again.';
      case 'NOT_FOUND':
        return 'That passkey is no longer there. The list has been refreshed.';
      case 'LOGIN_BUSY':
        return 'Passkey sign-in is very busy right now. Try again in a moment.';
      case 'LOGIN_RATE_LIMIT':
        if (error.rateLimit?.policy === 'passkey-options')
          return 'Too many passkey requests have come from your network. Try again in a minute.';
        return describeError(error);
      default:
        return describeError(error);
    }
  }
  if (error instanceof Error) {
    if (error.name === 'NotAllowedError' || error.name === 'AbortError')
      return 'The passkey request was cancelled or timed out.';
    if (error.name === 'InvalidStateError') return 'This device already holds a passkey for your account.';
  }
  return describeError(error);
}
