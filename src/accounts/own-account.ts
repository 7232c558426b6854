// What a person changes on their own account (docs/rules.md#accounts): password, sessions, devices.
import type { DeviceCookies } from '../auth/devices.ts';
import {
  offlineRefusal,
  PasswordCheckUnavailableError,
  type PasswordRules,
  type Refused,
  unchangedRefusal,
} from '../auth/password-rules.ts';
import type { PasswordChecker } from '../auth/passwords.ts';
import type { MintedSession, SessionService } from '../auth/sessions.ts';
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import { type Device, KnownDevicesRepository } from '../db/repositories/known-devices.ts';
import { type SessionListing, SessionsRepository } from '../db/repositories/sessions.ts';
import { type User, UsersRepository } from '../db/repositories/users.ts';
import {
  type PasswordRecheckServices,
  type RecheckOutcome,
  recheckPassword,
} from '../login/recheck-password.ts';
import type { Caller } from '../rate-limit/policy.ts';
import type { SecurityEventType } from '../security-event.ts';
import { type ChangeContext, recordEvents } from './account-events.ts';

export interface OwnAccountOptions {
  readonly db: Database;
  readonly clock: Clock;
  /** The instance id events carry. */
  readonly instance: string;
  /** Mints the rotated session, and drops this instance's cache of the account after a change. */
  readonly sessions: Pick<SessionService, 'mint' | 'idHashOf' | 'forgetUser'>;
  readonly devices: Pick<DeviceCookies, 'read'>;
  readonly passwords: Pick<PasswordChecker, 'rehash'>;
  /** The rules a new password meets (the breached-password API's among them). */
  readonly rules: Pick<PasswordRules, 'refusal'>;
  /** What the check of the current password runs over: the login defence's gate and failure budgets. */
  readonly recheck: PasswordRecheckServices;
}

/** The owner's request: who, and from which address (the events say both). */
export interface Owner {
  readonly user: User;
  /** The client address key. */
  readonly address: string | null;
}

/** What the owner's browser sends to change the password, with what the request brought. */
export interface PasswordChange {
  readonly currentPassword: string;
  readonly newPassword: string;
  /** The id of the session the request came with: the one that rotates. */
  readonly sessionId: string;
  /** The device cookie the request carried, if any: this browser stays a known device when it is the account's. */
  readonly deviceCookie: string | undefined;
  readonly userAgent: string | undefined;
  /** The caller as the rate limiter keys it (its address). */
  readonly caller: Caller;
}

/**
 * - `changed`: the new password is the account's; `session` is the rotated one (every other ended);
 * - `refused`, `busy`, `invalid`: the check of the current password's (RecheckOutcome), nothing written;
 * - `password-refused`: the new password breaks a rule (before the check when no network is needed);
 * - `check-unavailable`: the required breached-password API did not answer;
 * - `superseded`: an admin's reset, another change or the end of this session came first, and stands.
 */
export type PasswordChangeOutcome =
  | { readonly kind: 'changed'; readonly session: MintedSession }
  | Exclude<RecheckOutcome, { readonly kind: 'confirmed' }>
  | { readonly kind: 'password-refused'; readonly refused: Refused }
  | { readonly kind: 'check-unavailable' }
  | { readonly kind: 'superseded' };

export class OwnAccount {
  private readonly options: OwnAccountOptions;

  constructor(options: OwnAccountOptions) {
    this.options = options;
  }

  /**
   * Changes the owner's password: the rules that need no network first (a refused password spends
   * no check and no budget), then the current password checked as a sign-in checks one
   * (recheckPassword), then the rest of the rules, the hash, and the write (changePassword's).
   */
  async changePassword(owner: Owner, change: PasswordChange): Promise<PasswordChangeOutcome> {
    const { user } = owner;
    const { currentPassword, newPassword } = change;
    const offline =
      offlineRefusal(newPassword, user.email) ??
      // The same password again, or a temporary one kept inside the new one: the admin who gave it knows it.
      unchangedRefusal(newPassword, currentPassword, user.mustChangePassword);
    if (offline) return { kind: 'password-refused', refused: offline };
    const recheck = await recheckPassword(this.options.recheck, {
      userId: user.id,
      email: user.email,
      password: currentPassword,
      caller: change.caller,
    });
    if (recheck.kind !== 'confirmed') return recheck;
    let refusal: Refused | null;
    try {
      refusal = await this.options.rules.refusal(newPassword, user.email);
    } catch (error) {
      if (!(error instanceof PasswordCheckUnavailableError)) throw error;
      return { kind: 'check-unavailable' };
    }
    if (refusal) return { kind: 'password-refused', refused: refusal };
    const passwordHash = await this.options.passwords.rehash(newPassword);
    // This browser stays a known device when its cookie is the account's; its session rotates.
    const claim = this.options.devices.read(change.deviceCookie);
    const session = this.options.sessions.mint(user.id, change.userAgent);
    const changed = await this.writePassword(
      owner,
      {
        passwordHash,
        verifiedHash: recheck.verifiedHash,
        currentIdHash: this.options.sessions.idHashOf(change.sessionId),
      },
      session,
      claim?.userId === user.id ? claim.deviceId : null,
    );
    if (!changed) return { kind: 'superseded' };
    // This instance at once; the others when the change is announced (at the commit).
    this.options.sessions.forgetUser(user.id);
    return { kind: 'changed', session };
  }

  /** The owner's live sessions, the most recently used first; `current` marks the one with `currentPublicId`. */
  async sessions(
    userId: number,
    currentPublicId: string | null,
  ): Promise<(SessionListing & { current: boolean })[]> {
    const rows = await new SessionsRepository(this.options.db).listForUser(userId, this.options.clock.now());
    return rows.map(({ idHash: _, ...row }) => ({ ...row, current: row.id === currentPublicId }));
  }

  /** The owner's known devices, the most recently used first. */
  devices(userId: number): Promise<Device[]> {
    return new KnownDevicesRepository(this.options.db).list(userId);
  }

  /** Ends one of the owner's sessions by its public id; false (nothing written) when they have none such. */
  async endSession(owner: Owner, publicId: string): Promise<boolean> {
    const ended = await this.change(owner, 'session-ended', (connection) =>
      new SessionsRepository(connection).deleteByPublicId(owner.user.id, publicId),
    );
    if (ended) this.options.sessions.forgetUser(owner.user.id);
    return ended;
  }

  /** Ends every session of the owner but the one `sessionId` names; answers how many ended. */
  async endOtherSessions(owner: Owner, sessionId: string): Promise<number> {
    const keepIdHash = this.options.sessions.idHashOf(sessionId);
    let ended = 0;
    await this.change(owner, 'other-sessions-ended', async (connection) => {
      ended = await new SessionsRepository(connection).deleteOthers(owner.user.id, keepIdHash);
      return ended > 0;
    });
    if (ended > 0) this.options.sessions.forgetUser(owner.user.id);
    return ended;
  }

  /** Forgets one of the owner's known devices; false (nothing written) when they have none with this id. */
  forgetDevice(owner: Owner, deviceId: number): Promise<boolean> {
    return this.change(owner, 'device-forgotten', (connection) =>
      new KnownDevicesRepository(connection).forget(owner.user.id, deviceId),
    );
  }

  /**
   * The owner's new password (already checked against the rules and hashed, their current one
   * re-checked against `verifiedHash`): no longer temporary; every session of the account ends and
   * `session` (the rotated one of this browser) starts; every known device but `keepDeviceId` (this
   * browser's, when its cookie is the account's) is forgotten; a `password-changed` event. All or
   * nothing, and nothing when the account moved on while the change was prepared (a reset, another
   * change, this session ended): answers whether it changed.
   */
  private writePassword(
    owner: Owner,
    change: { passwordHash: string; verifiedHash: string; currentIdHash: string },
    session: MintedSession,
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
      await sessions.create(session.row);
      await new KnownDevicesRepository(connection).forgetAllBut(owner.user.id, keepDeviceId);
      return true;
    });
  }

  /**
   * Runs `work` in one transaction and, when it changed something (answers true), writes `type`
   * about the owner's account in it, naming the owner as the one who acted.
   */
  private change(owner: Owner, type: SecurityEventType, work: (connection: Queryable) => Promise<boolean>) {
    // db.transaction: on the embedded database no other request's query lands inside it.
    return this.options.db.transaction(async (connection) => {
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
