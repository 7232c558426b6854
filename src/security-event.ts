// The security-event contract: what a lower layer reports (a lock, a reset), nothing about storage.

/** The kinds of security event, in the order the admin page explains them. */
export const SECURITY_EVENT_TYPES = [
  'lock-started',
  'admin-reset',
  'known-device-refused',
  'login-pressure-started',
  'login-pressure-ended',
  'account-created',
  'account-disabled',
  'account-enabled',
  'password-set',
  'passkey-added',
  'passkey-removed',
  'passkey-counter-refused',
  'sessions-ended',
  'devices-forgotten',
  // Accounts people run themselves (docs/rules.md#accounts): what an owner reads of their account.
  'signed-in',
  'signed-in-new-device',
  'sign-in-failed',
  'password-changed',
  'password-reset',
  'session-ended',
  'other-sessions-ended',
  'device-forgotten',
  'account-renamed',
  'account-role-changed',
] as const;

export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];

/** One event as its reporter knows it; the recorder adds the time (its clock) and the instance. */
export interface SecurityEvent {
  readonly type: SecurityEventType;
  /**
   * The control concerned (a policy name such as `login-account`); an admin reset names
   * `login-account`, the login path's pressure `login-gate`. Account changes name where they came
   * from: `users-cli` (the account command line), `bootstrap-admin` (BOOTSTRAP_ADMIN_* at a start),
   * `admin` (an admin in the portal) or `account` (the owner in the portal); a passkey's events name
   * `passkey`. Sign-ins and failed ones name how: `password` or `passkey` (`password-change` for a
   * wrong current password given to change it); a session a sign-in ended because the account
   * had as many as it keeps names `session-limit`.
   */
  readonly control: string;
  /** The account, in the normal form that keys its budget (src/email.ts). */
  readonly email?: string | null;
  /** The client address key (an IPv6 address is its prefix), for controls keyed by address. */
  readonly address?: string | null;
  /** Who acted: the admin (admin-reset, an admin's account change), or the owner on their own account. */
  readonly actorId?: number | null;
}

/**
 * Where reporters send events. `record` returns at once and never throws: storing happens later,
 * batched, and a storage failure is logged, never surfaced to the request that reported the event.
 */
export interface SecurityEventSink {
  record(event: SecurityEvent): void;
}

/**
 * What the database keeps of one account's events (docs/rules.md#events-about-one-account): at most
 * EVENTS_PER_WINDOW rows of their own per EVENT_WINDOW_MS window (of the clock: 12:00, 12:10, …),
 * besides the first of each kind; the repeats past that fold into one summary row per kind,
 * control and actor, which keeps the first SUMMARY_ADDRESSES distinct addresses. The trigger of
 * migration 014 applies these numbers (a copy: test/http/security-event-cap.test.ts pins it).
 */
export const EVENTS_PER_WINDOW = 100;
export const EVENT_WINDOW_MS = 10 * 60 * 1000;
export const SUMMARY_ADDRESSES = 5;
