// What a person changes on their own account (docs/rules.md#accounts): the password, their sessions, their known devices — each with its security event, in one transaction.
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import { KnownDevicesRepository } from '../db/repositories/known-devices.ts';
import { type NewSession, SessionsRepository } from '../db/repositories/sessions.ts';
import { type User, UsersRepository } from '../db/repositories/users.ts';
import type { SecurityEventType } from '../security-event.ts';
import { type ChangeContext, recordEvents } from './accounts.ts';

export interface OwnAccountOptions {
  readonly clock: Clock;
  /** The instance id events carry. */
  readonly instance: string;
}

/** The owner's request: who, and from which address (the events say both). */
export interface Owner {
  readonly user: User;
  /** The client address key. */
  readonly address: string | null;
}

export class OwnAccount {
  private readonly db: Database;
  private readonly options: OwnAccountOptions;

  constructor(db: Database, options: OwnAccountOptions) {
    this.db = db;
    this.options = options;
  }

  /**
   * The owner's new password (already checked against the rules and hashed, their current one
   * re-checked against `verifiedHash`): no longer temporary; every session of the account ends and
   * `session` (the rotated one of this browser) starts; every known device but `keepDeviceId` (this
   * browser's, when its cookie is the account's) is forgotten; a `password-changed` event. All or
   * nothing, and nothing when the account moved on while the change was prepared (a reset, another
   * change, this session ended): answers whether it changed.
   */
  changePassword(
    owner: Owner,
    change: { passwordHash: string; verifiedHash: string; currentIdHash: string },
    session: NewSession,
    keepDeviceId: string | null,
  ): Promise<boolean> {
    return this.change(owner, 'password-changed', async (connection) => {
      const sessions = new SessionsRepository(connection);
      const users = new UsersRepository(connection);
      // The account's row first, as a sign-in's write and every other change lock it (one order, no deadlock).
      await users.lock(owner.user.id);
      // Both conditions lock what they read until the commit: a reset or a logout waits for it.
      if (!(await sessions.exists(owner.user.id, change.currentIdHash))) return false;
      if (!(await users.setPassword(owner.user.id, change.passwordHash, change.verifiedHash))) return false;
      await sessions.deleteForUser(owner.user.id);
      await sessions.create(session);
      await new KnownDevicesRepository(connection).forgetAllBut(owner.user.id, keepDeviceId);
      return true;
    });
  }

  /** Ends one of the owner's sessions by its public id; false (nothing written) when they have none such. */
  endSession(owner: Owner, publicId: string): Promise<boolean> {
    return this.change(owner, 'session-ended', (connection) =>
      new SessionsRepository(connection).deleteByPublicId(owner.user.id, publicId),
    );
  }

  /** Ends every session of the owner but the one with digest `keepIdHash`; answers how many ended. */
  async endOtherSessions(owner: Owner, keepIdHash: string): Promise<number> {
    let ended = 0;
    await this.change(owner, 'other-sessions-ended', async (connection) => {
      ended = await new SessionsRepository(connection).deleteOthers(owner.user.id, keepIdHash);
      return ended > 0;
    });
    return ended;
  }

  /** Forgets one of the owner's known devices; false (nothing written) when they have none with this id. */
  forgetDevice(owner: Owner, deviceId: number): Promise<boolean> {
    return this.change(owner, 'device-forgotten', (connection) =>
      new KnownDevicesRepository(connection).forget(owner.user.id, deviceId),
    );
  }

  /**
   * Runs `work` in one transaction and, when it changed something (answers true), writes `type`
   * about the owner's account in it, naming the owner as the one who acted.
   */
  private change(owner: Owner, type: SecurityEventType, work: (connection: Queryable) => Promise<boolean>) {
    // db.transaction: on the embedded database no other request's query lands inside it.
    return this.db.transaction(async (connection) => {
      const changed = await work(connection);
      if (changed) await recordEvents(connection, this.context(owner), owner.user, [type]);
      return changed;
    });
  }

  private context(owner: Owner): ChangeContext {
    return {
      at: this.options.clock.now(),
      instance: this.options.instance,
      control: 'account',
      actorId: owner.user.id,
      address: owner.address,
    };
  }
}
