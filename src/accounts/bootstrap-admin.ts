// The first admin (docs/rules.md#accounts): made at a start from BOOTSTRAP_ADMIN_* when none may sign in.
import { PasswordCheckUnavailableError } from '../auth/password-rules.ts';
import { inTransaction, type Queryable } from '../db/database.ts';
import { UsersRepository } from '../db/repositories/users.ts';
import { recordEvents } from './account-events.ts';
import type { CliAccountsOptions } from './cli-accounts.ts';

/** What a start did about the first admin. */
export type BootstrapOutcome =
  | 'created'
  /** Some admin may sign in already: BOOTSTRAP_ADMIN_* is not needed (and not used). */
  | 'admin-exists'
  /** No admin, but the bootstrap email names another account: nothing was changed. */
  | 'email-taken'
  /** No admin and no BOOTSTRAP_ADMIN_*: the start logs how to make one. */
  | 'no-admin'
  /** No admin, and the breached-password API lists BOOTSTRAP_ADMIN_PASSWORD: nothing was changed. */
  | 'password-breached'
  /** No admin, and the required breached-password API did not answer: nothing was changed. */
  | 'password-check-unavailable';

/**
 * On a start with no admin that may sign in, creates `admin` (BOOTSTRAP_ADMIN_*) as one. Runs on the
 * connection that holds the schema lock, so instances starting at once create it once.
 */
export async function bootstrapAdmin(
  connection: Queryable,
  admin: { readonly email: string; readonly password: string } | null,
  options: CliAccountsOptions,
): Promise<BootstrapOutcome> {
  const users = new UsersRepository(connection);
  if (await users.hasActiveAdmin()) return 'admin-exists';
  if (!admin) return 'no-admin';
  // The offline rules were checked with the configuration (config.ts); the range API is asked now.
  try {
    if ((await options.rules.refusal(admin.password, admin.email)) !== null) return 'password-breached';
  } catch (error) {
    if (error instanceof PasswordCheckUnavailableError) return 'password-check-unavailable';
    throw error;
  }
  const passwordHash = await options.hashPassword(admin.password);
  const user = await inTransaction(connection, async () => {
    const created = await users.create({
      email: admin.email,
      name: 'Administrator',
      role: 'admin',
      passwordHash,
    });
    const context = {
      at: options.clock.now(),
      instance: options.instance,
      control: 'bootstrap-admin',
      actorId: null,
    };
    if (created) await recordEvents(connection, context, created, ['account-created']);
    return created;
  });
  return user ? 'created' : 'email-taken';
}
