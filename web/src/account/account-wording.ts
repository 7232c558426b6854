// What the Account page says: why a password was refused, which browser, what ending one did.
import { parseUserAgent } from 'detect-browser';
import { ApiError, type PasswordRefusalReason } from '../../../src/client/index.ts';
import { describeError } from '../shared/wording.ts';

/**
 * Why a new password was refused (422 PASSWORD_REFUSED's `reason`), as something a person can act
 * on. The type fails when the client's list of reasons changes.
 */
export const PASSWORD_REFUSALS = {
  too_short:
    'This password is too short. Use at least 12 characters: a few unrelated words make one that is easy to remember.',
  too_long: 'This password is too long. Use at most 128 characters.',
  contains_email:
    'Do not use your email address, or the part before the @, as your password. Choose another.',
  common:
    'This password is on a list of common passwords that attackers try first. Choose one that is not: a few unrelated words work well.',
  weak: 'This password is easy to guess. Choose another one: a few unrelated words make one that is hard to guess and easy to remember.',
  breached:
    'This password has appeared in a data breach, so attackers try it. Choose one you have never used anywhere.',
  unchanged:
    'This is, or contains, the password you have now. Choose a new one that only you know (a temporary password is known to the admin who gave it).',
} as const satisfies Record<PasswordRefusalReason, string>;

/** Which field a refusal of a password change belongs to, and what it says. */
export interface PasswordChangeProblem {
  readonly field: 'current' | 'new' | 'form';
  readonly text: string;
}

/** Sorts the error of a password change: the current password, the new one, or the form as a whole. */
export function passwordChangeProblem(error: unknown): PasswordChangeProblem {
  if (error instanceof ApiError) {
    if (error.code === 'CURRENT_PASSWORD_INVALID')
      return { field: 'current', text: 'Your current password is not correct. Type it again.' };
    if (error.code === 'PASSWORD_REFUSED') {
      const reason = error.body.reason as PasswordRefusalReason | undefined;
      // `weak` says why in the server's message (the pattern it found), which the page shows.
      const text =
        reason === 'weak' && error.message
          ? error.message
          : reason && reason in PASSWORD_REFUSALS
            ? PASSWORD_REFUSALS[reason]
            : error.message;
      return { field: 'new', text };
    }
    if (error.code === 'LOGIN_RATE_LIMIT')
      return {
        field: 'current',
        text: 'Too many wrong passwords for this account. Your password was not changed.',
      };
    if (error.code === 'PASSWORD_CHECK_UNAVAILABLE')
      return {
        field: 'form',
        text: 'The new password could not be checked against the list of breached passwords just now. Nothing was changed: try again in a moment.',
      };
  }
  return { field: 'form', text: describeError(error) };
}

/** The second copy of the new password must match the first; says so when it does not. */
export function confirmationProblem(newPassword: string, again: string): string | null {
  return again !== '' && again !== newPassword ? 'The two new passwords are not the same.' : null;
}

const BROWSER_NAMES: Readonly<Record<string, string>> = {
  chrome: 'Chrome',
  'chromium-webview': 'Chrome',
  crios: 'Chrome',
  'edge-chromium': 'Edge',
  edge: 'Edge',
  edgios: 'Edge',
  firefox: 'Firefox',
  fxios: 'Firefox',
  safari: 'Safari',
  ios: 'Safari',
  'ios-webview': 'Safari',
  opera: 'Opera',
  samsung: 'Samsung Internet',
  android: 'Android browser',
};

/** "Chrome on Linux", from a session's or device's User-Agent; what little is known otherwise. */
export function browserName(userAgent: string | null): string {
  if (!userAgent) return 'An unknown browser';
  const parsed = parseUserAgent(userAgent);
  if (parsed === null || parsed.type === 'bot' || parsed.type === 'bot-device')
    return `A program (${userAgent.slice(0, 40)})`;
  const name = parsed.name ? (BROWSER_NAMES[parsed.name] ?? parsed.name) : 'A browser';
  return parsed.os ? `${name} on ${parsed.os}` : name;
}

/** A date and time as the page shows them; "never" for none. */
export const when = (iso: string | null): string => (iso === null ? 'never' : new Date(iso).toLocaleString());

/** What ending a session or forgetting a device failed with: one already gone is said plainly. */
export function describeEndError(error: unknown, what: 'session' | 'device'): string {
  if (error instanceof ApiError && error.code === 'NOT_FOUND')
    return what === 'session'
      ? 'That session had already ended. The list is up to date now.'
      : 'That device had already been forgotten. The list is up to date now.';
  return describeError(error);
}

/** "1 other session ended." */
export function endedSentence(ended: number): string {
  if (ended === 0) return 'There was no other session to end.';
  return `${ended} other session${ended === 1 ? '' : 's'} ended: those browsers are signed out.`;
}
