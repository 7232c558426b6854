// An admin's changes to other accounts (docs/rules.md#accounts): add, edit, reset, remove a passkey.
import type { PasswordChecker } from '../auth/passwords.ts';
import type { SessionService } from '../auth/sessions.ts';
import { generatePassword } from '../auth/temporary-passwords.ts';
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import { type AdminUser, AdminUsersRepository } from '../db/repositories/admin-users.ts';
import { type Passkey, PasskeysRepository } from '../db/repositories/passkeys.ts';
import { announceAccountChange, SessionsRepository } from '../db/repositories/sessions.ts';
import { type User, UsersRepository } from '../db/repositories/users.ts';
import type { Role } from '../domain.ts';
import { TEMPORARY_PASSWORD_TTL_MS } from '../limits.ts';
import type { SecurityEventType } from '../security-event.ts';
import { endSessionsAndForgetDevices, removePasskeys } from './account-cleanup.ts';
import { type ChangeContext, recordEvents } from './account-events.ts';

export interface AdminAccountsOptions {
  readonly db: Database;
  readonly clock: Clock;
  /** The instance id events carry. */
  readonly instance: string;
  /** Hashes a temporary password at today's cost. */
  readonly passwords: Pick<PasswordChecker, 'rehash'>;
  /** This instance's sessions cache: it drops a changed account at once, the others at the commit's announcement. */
  readonly sessions: Pick<SessionService, 'forgetUser'>;
}

/** The admin acting, and the address of the request. */
export interface ActingAdmin {
  readonly id: number;
  readonly address: string | null;
}

/** An edit of an account: any of its name, role, and whether it is disabled. */
export interface AccountEdit {
  readonly name?: string;
  readonly role?: Role;
  readonly disabled?: boolean;
}

/**
 * An edit refused, nothing changed: no such account, the acting admin is no longer one, an admin
 * removing their own rights, or the edit would leave no enabled admin.
 */
export type EditRefusal = 'no-such-account' | 'actor-not-admin' | 'self' | 'last-admin';

export class AdminAccounts {
  private readonly options: AdminAccountsOptions;

  constructor(options: AdminAccountsOptions) {
    this.options = options;
  }

  /** Every account, by id, as the People page shows it. */
  list(): Promise<AdminUser[]> {
    return new AdminUsersRepository(this.options.db).list();
  }

  /**
   * Adds an account with a new temporary password (shown once, to the admin): it signs in for
   * TEMPORARY_PASSWORD_TTL_MS and must be changed first. `email-taken` when the email names one.
   */
  async add(
    admin: ActingAdmin,
    account: { email: string; name: string; role: Role },
  ): Promise<{ user: AdminUser; temporaryPassword: string } | 'email-taken'> {
    const temporaryPassword = generatePassword();
    // Hashed before the transaction opens: nothing is held while the hash runs.
    const passwordHash = await this.options.passwords.rehash(temporaryPassword);
    const user = await this.change(async (connection) => {
      const now = this.options.clock.now();
      const created = await new UsersRepository(connection).create({
        ...account,
        passwordHash,
        temporaryUntil: now + TEMPORARY_PASSWORD_TTL_MS,
        at: now,
      });
      if (!created) return null;
      await recordEvents(connection, this.context(admin), created, ['account-created']);
      return new AdminUsersRepository(connection).find(created.id);
    });
    return user ? { user, temporaryPassword } : 'email-taken';
  }

  /**
   * Applies `edit` to the account `userId`, each change that changes something with its event. A
   * demotion or a disable is refused when it is the admin's own account or would leave no enabled
   * admin, checked under a lock of the admins' rows (AdminUsersRepository.checkEdit). Disabling ends
   * the account's sessions and forgets its known devices at once.
   */
  async edit(admin: ActingAdmin, userId: number, edit: AccountEdit): Promise<AdminUser | EditRefusal> {
    const outcome = await this.change(async (connection) => {
      const accounts = new AdminUsersRepository(connection);
      const removesAdmin = edit.role === 'employee' || edit.disabled === true;
      const check = await accounts.checkEdit(admin.id, userId, removesAdmin);
      if (!check.ok) return check.why;
      const { target } = check;
      const events: SecurityEventType[] = [];
      if (edit.name !== undefined && edit.name !== target.name) {
        await accounts.rename(userId, edit.name);
        events.push('account-renamed');
      }
      if (edit.role !== undefined && edit.role !== target.role) {
        await accounts.setRole(userId, edit.role);
        events.push('account-role-changed');
      }
      const users = new UsersRepository(connection);
      if (edit.disabled === true && !target.disabled) {
        await users.disable(userId, this.options.clock.now());
        await new SessionsRepository(connection).deleteForUser(userId);
        events.push('account-disabled');
      } else if (edit.disabled === false && target.disabled) {
        await users.enable(userId);
        events.push('account-enabled');
      }
      if (events.length > 0) {
        await recordEvents(connection, this.context(admin), target, events);
        // Sessions cached anywhere carry the name and role: every instance reads them again.
        await announceAccountChange(connection, userId);
      }
      return (await accounts.find(userId))!;
    });
    if (typeof outcome !== 'string') this.options.sessions.forgetUser(outcome.id);
    return outcome;
  }

  /**
   * Gives the account a new temporary password (shown once, to the admin), ends its sessions and
   * forgets its known devices, with a `password-reset` event; a refusal when there is no such
   * account or the admin is one no more.
   */
  async reset(admin: ActingAdmin, userId: number): Promise<{ temporaryPassword: string } | EditRefusal> {
    const temporaryPassword = generatePassword();
    const passwordHash = await this.options.passwords.rehash(temporaryPassword);
    const outcome = await this.change(async (connection): Promise<true | EditRefusal> => {
      if (!(await new AdminUsersRepository(connection).actorStillAdmin(admin.id))) return 'actor-not-admin';
      const users = new UsersRepository(connection);
      const user: User | null = await users.findById(userId);
      if (!user) return 'no-such-account';
      const now = this.options.clock.now();
      await users.setTemporaryPassword(userId, passwordHash, now + TEMPORARY_PASSWORD_TTL_MS);
      const context = this.context(admin);
      await recordEvents(connection, context, user, ['password-reset']);
      await endSessionsAndForgetDevices(connection, user, context);
      return true;
    });
    if (outcome !== true) return outcome;
    this.options.sessions.forgetUser(userId);
    return { temporaryPassword };
  }

  /** The account's passkeys, oldest first (name and times only); null when there is no such account. */
  async passkeys(userId: number): Promise<Passkey[] | null> {
    const user = await new UsersRepository(this.options.db).findById(userId);
    return user ? new PasskeysRepository(this.options.db).list(user.id) : null;
  }

  /**
   * Removes one of the account's passkeys (one an attacker added), with a `passkey-removed` event
   * naming the admin, in one transaction; a refusal when the admin is one no more, or the account
   * has no such passkey.
   */
  removePasskey(
    admin: ActingAdmin,
    userId: number,
    passkeyId: number,
  ): Promise<true | 'actor-not-admin' | 'no-such-passkey'> {
    return this.change(async (connection) => {
      // Its admin rights may have gone while the request was on its way (another admin's edit).
      if (!(await new AdminUsersRepository(connection).actorStillAdmin(admin.id))) return 'actor-not-admin';
      const user = await new UsersRepository(connection).findById(userId);
      if (!user) return 'no-such-passkey';
      const context = { ...this.context(admin), control: 'passkey' };
      const removed = await removePasskeys(connection, user, context, passkeyId);
      return removed.length > 0 ? true : 'no-such-passkey';
    });
  }

  private context(admin: ActingAdmin): ChangeContext {
    return {
      at: this.options.clock.now(),
      instance: this.options.instance,
      control: 'admin',
      actorId: admin.id,
      address: admin.address,
    };
  }

  private change<T>(work: (connection: Queryable) => Promise<T>): Promise<T> {
    // db.transaction: on the embedded database no other request's query lands inside it.
    return this.options.db.transaction(work);
  }
}
