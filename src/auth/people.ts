// What an admin changes on other accounts (docs/rules.md#accounts): add with a temporary password, rename, change the role, disable and enable, reset — each with its security event, in one transaction.
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import { type AdminUser, AdminUsersRepository } from '../db/repositories/admin-users.ts';
import { announceAccountChange, SessionsRepository } from '../db/repositories/sessions.ts';
import { type Role, type User, UsersRepository } from '../db/repositories/users.ts';
import { TEMPORARY_PASSWORD_TTL_MS } from '../limits.ts';
import type { SecurityEventType } from '../security-event.ts';
import { type ChangeContext, endSessionsAndForgetDevices, recordEvents } from './accounts.ts';

export interface PeopleOptions {
  readonly clock: Clock;
  readonly instance: string;
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

export class People {
  private readonly db: Database;
  private readonly options: PeopleOptions;

  constructor(db: Database, options: PeopleOptions) {
    this.db = db;
    this.options = options;
  }

  /**
   * Adds an account whose password is temporary (hashed by the caller): it signs in for
   * TEMPORARY_PASSWORD_TTL_MS and must be changed first. Null when the email is taken.
   */
  add(
    admin: ActingAdmin,
    account: { email: string; name: string; role: Role },
    passwordHash: string,
  ): Promise<AdminUser | null> {
    return this.change(async (connection) => {
      const now = this.options.clock.now();
      const user = await new UsersRepository(connection).create({
        ...account,
        passwordHash,
        temporaryUntil: now + TEMPORARY_PASSWORD_TTL_MS,
        at: now,
      });
      if (!user) return null;
      await recordEvents(connection, this.context(admin), user, ['account-created']);
      return new AdminUsersRepository(connection).find(user.id);
    });
  }

  /**
   * Applies `edit` to the account `userId`, each change that changes something with its event. A
   * demotion or a disable is refused when it is the admin's own account or would leave no enabled
   * admin, checked under a lock of the admins' rows (AdminUsersRepository.checkEdit). Disabling ends
   * the account's sessions and forgets its known devices at once.
   */
  edit(admin: ActingAdmin, userId: number, edit: AccountEdit): Promise<AdminUser | EditRefusal> {
    return this.change(async (connection) => {
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
  }

  /**
   * Gives the account a new temporary password (hashed by the caller), ends its sessions and
   * forgets its known devices, with a `password-reset` event; a refusal when there is no such
   * account or the admin is one no more.
   */
  reset(admin: ActingAdmin, userId: number, passwordHash: string): Promise<true | EditRefusal> {
    return this.change(async (connection) => {
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
    return this.db.transaction(work);
  }
}
