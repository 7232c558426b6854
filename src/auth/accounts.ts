// Account changes (contract §7): add, disable, enable, set a password, the first admin — each with its security event, in one transaction.
import type { Clock } from '../clock.ts';
import { type Database, inTransaction, type Queryable } from '../db/database.ts';
import { SecurityEventsRepository } from '../db/repositories/security-events.ts';
import { SessionsRepository } from '../db/repositories/sessions.ts';
import { type Account, type Role, type User, UsersRepository } from '../db/repositories/users.ts';
import { isEmailAddress, normaliseEmail } from '../email.ts';
import { MIN_PASSWORD_LENGTH } from '../limits.ts';
import type { SecurityEventType } from '../security-event.ts';

/** Where a change came from, as its security event's `control` names it. */
export type ChangeSource = 'users-cli' | 'bootstrap-admin';

export interface AccountsOptions {
  readonly clock: Clock;
  /** The instance id events carry (INSTANCE_ID, else host and process). */
  readonly instance: string;
  readonly source: ChangeSource;
  /** The service's own hash at its configured cost (auth/passwords.ts). */
  readonly hashPassword: (password: string) => Promise<string>;
}

/** A change refused before anything was written; `message` is one line for a person. */
export class AccountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AccountError';
  }
}

const MAX_NAME_LENGTH = 200;

/** What is wrong with `password` as an account's password, or null. */
export function passwordProblem(password: string): string | null {
  return [...password].length < MIN_PASSWORD_LENGTH
    ? `the password is too short: at least ${MIN_PASSWORD_LENGTH} characters`
    : null;
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
    const problem = passwordProblem(input.password);
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

  /** Gives the account a new password (its sessions stay: disable it to end them). */
  async setPassword(email: string, password: string): Promise<User> {
    const problem = passwordProblem(password);
    if (problem) throw new AccountError(problem);
    const passwordHash = await this.options.hashPassword(password);
    return this.change(async (connection) => {
      const users = new UsersRepository(connection);
      const user = await this.find(users, email);
      await users.updatePasswordHash(user.id, passwordHash);
      await this.event(connection, 'password-set', user);
      return user;
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
  return new SecurityEventsRepository(connection).insert([
    {
      at: options.clock.now(),
      type,
      control: options.source,
      email: normaliseEmail(user.email),
      address: null,
      instance: options.instance,
      actorId: null,
    },
  ]);
}

/** What a start did about the first admin. */
export type BootstrapOutcome =
  | 'created'
  /** Some admin may sign in already: BOOTSTRAP_ADMIN_* is not needed (and not used). */
  | 'admin-exists'
  /** No admin, but the bootstrap email names another account: nothing was changed. */
  | 'email-taken'
  /** No admin and no BOOTSTRAP_ADMIN_*: the start logs how to make one. */
  | 'no-admin';

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
