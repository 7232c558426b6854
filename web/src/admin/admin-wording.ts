// What the admin page says about login locks and security events.
import type { LoginLock, SecurityEvent, SecurityEventType } from '../../../src/client/index.ts';

export const EVENT_LABELS: Readonly<Record<SecurityEventType, string>> = {
  'lock-started': 'Lock started',
  'admin-reset': 'Unlocked by an admin',
  'known-device-refused': 'Known device refused',
  'login-pressure-started': 'Sign-in under pressure: attempts turned away',
  'login-pressure-ended': 'Sign-in pressure over',
  'account-created': 'Account created',
  'account-disabled': 'Account disabled (signed out everywhere)',
  'account-enabled': 'Account enabled again',
  'password-set': 'Password set',
  'passkey-added': 'Passkey added',
  'passkey-removed': 'Passkey removed',
  'passkey-counter-refused': 'Passkey refused: its counter went back (a cloned authenticator?)',
  'sessions-ended': 'Signed out everywhere (its sessions ended)',
  'devices-forgotten': 'Known devices forgotten',
  'signed-in': 'Signed in',
  'signed-in-new-device': 'Signed in from a new browser',
  'sign-in-failed': 'Failed sign-in',
  'password-changed': 'Password changed (signed out everywhere else)',
  'password-reset': 'Password reset by an admin (signed out everywhere)',
  'session-ended': 'Signed out a session',
  'other-sessions-ended': 'Signed out every other session',
  'device-forgotten': 'Known device forgotten',
  'account-renamed': 'Name changed',
  'account-role-changed': 'Role changed',
};

/** What a control locks, in words: "Account (too many failed sign-ins)". */
export const CONTROL_LABELS: Readonly<Record<string, string>> = {
  'login-account': 'Account',
  'login-ip': 'Network address',
  'login-device': 'Known device',
  'login-gate': 'Sign-in load',
  'users-cli': 'Account command line',
  'bootstrap-admin': 'First admin at start',
  passkey: 'Passkey',
  'session-limit': 'Sessions an account keeps',
};

export const controlLabel = (control: string): string => CONTROL_LABELS[control] ?? control;

/**
 * Who a lock or an event is about, and whether an admin can unlock it from the page: only account
 * locks can be reset; address and device locks end by themselves when their window frees an attempt.
 */
export function subjectOf(
  entry: Pick<LoginLock, 'email' | 'address' | 'device'> | Pick<SecurityEvent, 'email' | 'address'>,
): {
  readonly text: string;
  readonly email: string | null;
} {
  if (entry.email) return { text: entry.email, email: entry.email };
  if (entry.address) return { text: entry.address, email: null };
  if ('device' in entry && entry.device) return { text: `device ${entry.device.slice(0, 8)}…`, email: null };
  return { text: 'Unknown', email: null };
}

/** A stable key for a lock row: one control locks one subject at most once. */
export const lockKey = (lock: LoginLock): string =>
  `${lock.control}:${lock.email ?? ''}:${lock.address ?? ''}:${lock.device ?? ''}`;

/** "3 failed sign-ins" */
export const failuresText = (failures: number): string =>
  `${failures} failed sign-in${failures === 1 ? '' : 's'}`;

/** Who an event is about: the login path's pressure concerns every sign-in on the server that saw it. */
export const eventSubject = (event: SecurityEvent): string =>
  event.control === 'login-gate' ? 'Every sign-in on this server' : subjectOf(event).text;

/**
 * A summary row in words (docs/rules.md#events-about-one-account): "140 more times from 3
 * addresses, the last at 12:09:58"; null for an event stored as its own row.
 */
export function repeatsText(event: SecurityEvent): string | null {
  if (event.count === undefined) return null;
  const times = `${event.count} more time${event.count === 1 ? '' : 's'}`;
  const seen = event.addresses?.length ?? 0;
  const from =
    seen === 0
      ? ''
      : event.moreAddresses
        ? ` from more than ${seen} addresses`
        : ` from ${seen} address${seen === 1 ? '' : 'es'}`;
  const last = event.lastAt ? `, the last at ${new Date(event.lastAt).toLocaleTimeString()}` : '';
  return `${times}${from}${last}`;
}

/** Where a summary's events came from: "203.0.113.1, 203.0.113.2 and others"; null when none is kept. */
export function addressesText(event: SecurityEvent): string | null {
  const addresses = event.addresses ?? [];
  if (addresses.length === 0) return null;
  return `${addresses.join(', ')}${event.moreAddresses ? ' and others' : ''}`;
}
