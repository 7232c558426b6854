// Account changes (docs/rules.md#accounts): add, disable, enable, set a password, clean up a held account, the first admin — each with its security events, in one transaction.
import type { Clock } from '../clock.ts';
import { type Database, inTransaction, type Queryable } from '../db/database.ts';
import { deletePasskeys, type Passkey, PasskeysRepository } from '../db/repositories/passkeys.ts';
import { SecurityEventsRepository } from '../db/repositories/security-events.ts';
import { SessionsRepository } from '../db/repositories/sessions.ts';
import { type Account, type Role, type User, UsersRepository } from '../db/repositories/users.ts';
import { isEmailAddress, normaliseEmail } from '../email.ts';
import type { SecurityEventType } from '../security-event.ts';
import {
  hasUnstorableCharacter,
  PasswordCheckUnavailableError,
  type PasswordRules,
  UNSTORABLE_PASSWORD,
} from './password-rules.ts';

/** Where a change came from, as its security event's `control` names it. */
export type ChangeSource = 'users-cli' | 'bootstrap-admin';

export interface AccountsOptions {
  readonly clock: Clock;
  /** The instance id events carry (INSTANCE_ID, else host and process). */
  readonly instance: string;
  readonly source: ChangeSource;
  /** The service's own hash at its configured cost (auth/passwords.ts). */
  readonly hashPassword: (password: string) => Promise<string>;
  /** The rules every password an account is given meets (auth/password-rules.ts). */
  readonly rules: PasswordRules;
}

/** Who made a change and when, as its security events record it. */
export interface ChangeContext {
  /** Epoch ms. */
  readonly at: number;
  /** The instance id events carry. */
  readonly instance: string;
  /** The events' `control`: `users-cli`, or what a route names (`passkey` for an admin's removal). */
  readonly control: string;
  /** The admin who acted; null for the command line. */
  readonly actorId: number | null;
  /** The address the change came from (an admin's request); null for the command line. */
  readonly address?: string | null;
}

/** A change refused before anything was written; `message` is one line for a person. */
export class AccountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AccountError';
  }
}

const MAX_NAME_LENGTH = 200;

/**
 * What is wrong with `password` as the password of the account `email`, as one line for a person,
 * or null: the password rules, the breached-password API's among them (a missing answer when it
 * is required is a problem too).
 */
export async function passwordProblem(
  rules: PasswordRules,
  password: string,
  email: string,
): Promise<string | null> {
  if (hasUnstorableCharacter(password)) return `the password is ${UNSTORABLE_PASSWORD}`;
  try {
    const refusal = await rules.refusal(password, email);
    return refusal === null ? null : `the password is refused (${refusal.reason}): ${refusal.message}`;
  } catch (error) {
    if (!(error instanceof PasswordCheckUnavailableError)) throw error;
    return 'the breached-password check (PASSWORD_BREACH_API) did not answer, and PASSWORD_BREACH_API_REQUIRED is set: nothing was changed';
  }
}

/**
 * Ends every session of `user` and forgets its known devices (device cookies issued until
 * `context.at` stop counting as known), with a `sessions-ended` and a `devices-forgotten` security
 * event, all on `connection` — run it inside the transaction of the change that calls for it (a
 * password set by `users set-password`, an admin's reset) so the change and the clean-up happen
 * together or not at all. Sessions are rows: deleting them announces the account's change, and
 * every instance drops its cached sessions of it at commit (auth/sessions.ts). Answers how many
 * sessions ended.
 */
export async function endSessionsAndForgetDevices(
  connection: Queryable,
  user: User,
  context: ChangeContext,
): Promise<number> {
  const ended = await new SessionsRepository(connection).deleteForUser(user.id);
  await new UsersRepository(connection).forgetDevices(user.id, context.at);
  await recordEvents(connection, context, user, ['sessions-ended', 'devices-forgotten']);
  return ended;
}

/**
 * Removes `user`'s passkeys on `connection` — all of them, or only the one `passkeyId` names —
 * with a `passkey-removed` security event for each (so the events count them). Answers those
 * removed, oldest first; none when the account has no such passkey (and then records nothing).
 */
export async function removePasskeys(
  connection: Queryable,
  user: User,
  context: ChangeContext,
  passkeyId?: number,
): Promise<Passkey[]> {
  const removed = await deletePasskeys(connection, user.id, passkeyId);
  await recordEvents(
    connection,
    context,
    user,
    removed.map((): SecurityEventType => 'passkey-removed'),
  );
  return removed;
}

export class Accounts {
  private readonly db: Database;
  private readonly options: AccountsOptions;

  constructor(db: Database, options: AccountsOptions) {
    this.db = db;
    this.options = options;
  }

  /** Creates an account; throws AccountError for bad input or a taken email. */
  async add(input: { email: string; name: string; role: Role; password: string }): Promise<User> {
    const name = input.name.trim();
    if (!isEmailAddress(input.email))
      throw new AccountError(`not an email address: ${JSON.stringify(input.email)}`);
    if (!name || name.length > MAX_NAME_LENGTH)
      throw new AccountError(`the name must have 1 to ${MAX_NAME_LENGTH} characters`);
    const problem = await passwordProblem(this.options.rules, input.password, input.email);
    if (problem) throw new AccountError(problem);
    // Hashed before the transaction opens: nothing is held while the hash runs.
    const passwordHash = await this.options.hashPassword(input.password);
    return this.change((connection) =>
      createAccount(connection, this.options, { ...input, name, passwordHash }).then((user) => {
        if (!user)
          throw new AccountError(`an account with the email ${normaliseEmail(input.email)} exists already`);
        return user;
      }),
    );
  }

  /**
   * Disables the account: it cannot sign in by any means, its sessions end and its device cookies
   * are revoked, all in one transaction. Answers false when it was disabled already (nothing changes).
   */
  disable(email: string): Promise<boolean> {
    return this.change(async (connection) => {
      const users = new UsersRepository(connection);
      const user = await this.find(users, email);
      if (!(await users.disable(user.id, this.options.clock.now()))) return false;
      await new SessionsRepository(connection).deleteForUser(user.id);
      await this.event(connection, 'account-disabled', user);
      return true;
    });
  }

  /** Lets a disabled account sign in again; false when it was not disabled. */
  enable(email: string): Promise<boolean> {
    return this.change(async (connection) => {
      const users = new UsersRepository(connection);
      const user = await this.find(users, email);
      if (!(await users.enable(user.id))) return false;
      await this.event(connection, 'account-enabled', user);
      return true;
    });
  }

  /**
   * Gives the account a new password and cleans up after whoever held the old one: its sessions
   * end and its known devices are forgotten (endSessionsAndForgetDevices), in the same
   * transaction. Its passkeys stay: `removePasskeys` is the separate step. Answers how many
   * sessions ended.
   */
  async setPassword(email: string, password: string): Promise<{ user: User; sessionsEnded: number }> {
    const problem = await passwordProblem(this.options.rules, password, email);
    if (problem) throw new AccountError(problem);
    const passwordHash = await this.options.hashPassword(password);
    return this.change(async (connection) => {
      const users = new UsersRepository(connection);
      const user = await this.find(users, email);
      await users.setPassword(user.id, passwordHash);
      await this.event(connection, 'password-set', user);
      const sessionsEnded = await endSessionsAndForgetDevices(connection, user, this.context());
      return { user, sessionsEnded };
    });
  }

  /** The account's passkeys, oldest first (name and times only). */
  async passkeys(email: string): Promise<{ user: User; passkeys: Passkey[] }> {
    const user = await this.find(new UsersRepository(this.db), email);
    return { user, passkeys: await new PasskeysRepository(this.db).list(user.id) };
  }

  /** Removes every passkey of the account, a `passkey-removed` event each; answers those removed. */
  removePasskeys(email: string): Promise<{ user: User; removed: Passkey[] }> {
    return this.change(async (connection) => {
      const user = await this.find(new UsersRepository(connection), email);
      return { user, removed: await removePasskeys(connection, user, this.context()) };
    });
  }

  list(): Promise<Account[]> {
    return new UsersRepository(this.db).list();
  }

  private async find(users: UsersRepository, email: string): Promise<User> {
    const found = await users.findCredentials(email);
    if (!found) throw new AccountError(`no account has the email ${JSON.stringify(email)}`);
    return found.user;
  }

  private event(connection: Queryable, type: SecurityEventType, user: User): Promise<void> {
    return recordChange(connection, this.options, type, user);
  }

  /** This command's changes as their events record them: now, from this source, by no admin. */
  private context(): ChangeContext {
    return {
      at: this.options.clock.now(),
      instance: this.options.instance,
      control: this.options.source,
      actorId: null,
    };
  }

  /** Runs `work` in one transaction on a connection of its own: the change and its event, or neither. */
  private change<T>(work: (connection: Queryable) => Promise<T>): Promise<T> {
    return this.db.withConnection((connection) => inTransaction(connection, () => work(connection)));
  }
}

async function createAccount(
  connection: Queryable,
  options: AccountsOptions,
  account: { email: string; name: string; role: Role; passwordHash: string },
): Promise<User | null> {
  const user = await new UsersRepository(connection).create(account);
  if (user) await recordChange(connection, options, 'account-created', user);
  return user;
}

function recordChange(
  connection: Queryable,
  options: AccountsOptions,
  type: SecurityEventType,
  user: User,
): Promise<void> {
  const context = {
    at: options.clock.now(),
    instance: options.instance,
    control: options.source,
    actorId: null,
  };
  return recordEvents(connection, context, user, [type]);
}

/** Stores one event of each type about `user`, in one statement on `connection`. */
export function recordEvents(
  connection: Queryable,
  context: ChangeContext,
  user: User,
  types: readonly SecurityEventType[],
): Promise<void> {
  return new SecurityEventsRepository(connection).insert(
    types.map((type) => ({
      at: context.at,
      type,
      control: context.control,
      email: normaliseEmail(user.email),
      address: context.address ?? null,
      instance: context.instance,
      actorId: context.actorId,
    })),
  );
}

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
  options: Omit<AccountsOptions, 'source'>,
): Promise<BootstrapOutcome> {
  if (await new UsersRepository(connection).hasActiveAdmin()) return 'admin-exists';
  if (!admin) return 'no-admin';
  // The offline rules were checked with the configuration (config.ts); the range API is asked now.
  try {
    if ((await options.rules.refusal(admin.password, admin.email)) !== null) return 'password-breached';
  } catch (error) {
    if (error instanceof PasswordCheckUnavailableError) return 'password-check-unavailable';
    throw error;
  }
  const passwordHash = await options.hashPassword(admin.password);
  const user = await inTransaction(connection, () =>
    createAccount(
      connection,
      { ...options, source: 'bootstrap-admin' },
      { email: admin.email, name: 'Administrator', role: 'admin', passwordHash },
    ),
  );
  return user ? 'created' : 'email-taken';
}
