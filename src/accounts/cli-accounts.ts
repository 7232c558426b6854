// The command line's account changes (docs/rules.md#accounts): add, disable, enable, set a password.

import {
  hasUnstorableCharacter,
  PasswordCheckUnavailableError,
  type PasswordRules,
  UNSTORABLE_PASSWORD,
} from '../auth/password-rules.ts';
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import { type Passkey, PasskeysRepository } from '../db/repositories/passkeys.ts';
import { SessionsRepository } from '../db/repositories/sessions.ts';
import { type Account, type User, UsersRepository } from '../db/repositories/users.ts';
import type { Role } from '../domain.ts';
import { isEmailAddress, normaliseEmail } from '../email.ts';
import type { SecurityEventType } from '../security-event.ts';
import { endSessionsAndForgetDevices, removePasskeys } from './account-cleanup.ts';
import { type ChangeContext, recordEvents } from './account-events.ts';

export interface CliAccountsOptions {
  readonly clock: Clock;
  /** The instance id events carry (INSTANCE_ID, else host and process). */
  readonly instance: string;
  /** The service's own hash at its configured cost (auth/passwords.ts). */
  readonly hashPassword: (password: string) => Promise<string>;
  /** The rules every password an account is given meets (auth/password-rules.ts). */
  readonly rules: PasswordRules;
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

export class CliAccounts {
  private readonly db: Database;
  private readonly options: CliAccountsOptions;

  constructor(db: Database, options: CliAccountsOptions) {
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
    return this.change(async (connection) => {
      const user = await new UsersRepository(connection).create({ ...input, name, passwordHash });
      if (!user)
        throw new AccountError(`an account with the email ${normaliseEmail(input.email)} exists already`);
      await this.event(connection, 'account-created', user);
      return user;
    });
  }

  /**
   * Disables the account: it cannot sign in by any means, its sessions end and its device cookies
   * are revoked, all in one transaction. Answers false when it was disabled already (nothing changes).
   */
  disable(email: string): Promise<boolean> {
    return this.changeOf(email, 'account-disabled', async (connection, user) => {
      if (!(await new UsersRepository(connection).disable(user.id, this.options.clock.now()))) return false;
      await new SessionsRepository(connection).deleteForUser(user.id);
      return true;
    });
  }

  /** Lets a disabled account sign in again; false when it was not disabled. */
  enable(email: string): Promise<boolean> {
    return this.changeOf(email, 'account-enabled', (connection, user) =>
      new UsersRepository(connection).enable(user.id),
    );
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
    return recordEvents(connection, this.context(), user, [type]);
  }

  /** This command's changes as their events record them: now, from the command line, by no admin. */
  private context(): ChangeContext {
    return {
      at: this.options.clock.now(),
      instance: this.options.instance,
      control: 'users-cli',
      actorId: null,
    };
  }

  /**
   * Runs `work` on the account `email` names in one transaction and, when it changed something
   * (answers true), writes `type` about the account in it.
   */
  private changeOf(
    email: string,
    type: SecurityEventType,
    work: (connection: Queryable, user: User) => Promise<boolean>,
  ): Promise<boolean> {
    return this.change(async (connection) => {
      const user = await this.find(new UsersRepository(connection), email);
      if (!(await work(connection, user))) return false;
      await this.event(connection, type, user);
      return true;
    });
  }

  /** Runs `work` in one transaction: the change and its events, or neither. */
  private change<T>(work: (connection: Queryable) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
