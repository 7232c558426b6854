// What the People page says: roles, an account's state, and why an admin's change was refused.
import { type AdminUser, ApiError, type Role, type ServerErrorCode } from '../../../src/client/index.ts';
import { describeError } from '../shared/wording.ts';

/** A label for every role, and only for those: the type fails when the client's list changes. */
export const ROLE_LABELS = { employee: 'Employee', admin: 'Admin' } as const satisfies Record<Role, string>;

/** "Disabled", "Must choose a new password" or "Active": what the account can do now. */
export function personState(person: Pick<AdminUser, 'disabled' | 'mustChangePassword'>): string {
  if (person.disabled) return 'Disabled';
  if (person.mustChangePassword) return 'Must choose a new password';
  return 'Active';
}

/** The refusals the People page words its own way; the others are worded as everywhere. */
const PEOPLE_REFUSALS = new Map<ServerErrorCode, string>([
  [
    'LAST_ADMIN',
    'That would leave no enabled admin, and nobody could manage the portal. Make someone else an admin first; you cannot disable or demote yourself.',
  ],
  ['EMAIL_TAKEN', 'An account with that email already exists. Find it in the list instead.'],
  ['NOT_FOUND', 'That account or passkey is no longer there. The list is up to date now.'],
  ['VALIDATION_ERROR', 'Check the fields: a valid email, a name, and a role.'],
]);

/** Why a change on the People page was refused, in words an admin can act on. */
export function describePeopleError(error: unknown): string {
  const own = error instanceof ApiError ? PEOPLE_REFUSALS.get(error.code as ServerErrorCode) : undefined;
  return own ?? describeError(error);
}

/** What an admin is told to do with a temporary password, shown once. */
export const TEMPORARY_PASSWORD_HINT =
  'It is shown only this once. Give it to them in person or another safe way: it works for 7 days, and they choose a password of their own when they first sign in.';
