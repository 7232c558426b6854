// Users: lookups by email and id, who may sign in, the list of reassignment targets, and account changes.
import type { Role } from '../../domain.ts';
import { normaliseEmail } from '../../email.ts';
import type { Queryable } from '../database.ts';

/** A device cookie a sign-in presented: its device id, and when it was issued (epoch ms). */
export interface PresentedDevice {
  readonly deviceId: string;
  readonly issuedAt: number;
}

/** How many accounts' hashes were made at one cost (`parameters`: the hash without its salt and key). */
export interface StoredHashCount {
  readonly parameters: string;
  readonly accounts: number;
}

export interface User {
  id: number;
  email: string;
  name: string;
  role: Role;
  /** True while the account signs in with a temporary password: it must choose its own first. */
  mustChangePassword: boolean;
}

/** A user as colleagues see them (a reassignment target): nothing about the account's password. */
export type Colleague = Omit<User, 'mustChangePassword'>;

/** An account as the account command line lists it. */
export interface Account extends User {
  /** When the account was disabled (epoch ms); null while it may sign in. */
  disabledAt: number | null;
}

/** The columns of a User, from the users table aliased `alias`. */
export const userColumns = (alias: string): string =>
  `${alias}.id, ${alias}.email, ${alias}.name, ${alias}.role, ${alias}.must_change_password AS "mustChangePassword"`;

const COLUMNS = userColumns('users');

/**
 * THE rule of who may sign in, as SQL on the users table aliased `alias`: an account that is not
 * disabled. Sessions, reassignment targets and the admin check all filter with it.
 */
export const maySignInSql = (alias: string): string => `${alias}.disabled_at IS NULL`;

/** The same rule for an account already read (password login reads it with its hash). */
export function accountMaySignIn(account: { readonly disabledAt: number | null }): boolean {
  return account.disabledAt === null;
}

/** Whether the account's password signs in at `now`: a temporary one only until it expires. */
export function passwordUsable(account: { readonly passwordExpiresAt: number | null }, now: number): boolean {
  return account.passwordExpiresAt === null || now < account.passwordExpiresAt;
}

export interface Credentials {
  user: User;
  passwordHash: string;
  /** Device cookies issued at or before this time (epoch ms) are revoked; null when none are. */
  devicesValidAfter: number | null;
  /** When the account was disabled (epoch ms), or null: see accountMaySignIn. */
  disabledAt: number | null;
  /** When a temporary password stops signing in (epoch ms); null for a password of the owner's own. */
  passwordExpiresAt: number | null;
  /**
   * Whether the device the login presents (its id, from a valid device cookie) is a known device of
   * this account: issued to it and not forgotten since. False when no device id was given.
   */
  deviceKnown: boolean;
}

/**
 * Whether the device ($2, its id; $3, when its cookie was issued) is a known device of the `users`
 * row: a cookie of one of its rows, or one issued before the rows existed (migration 012) that the
 * account has not forgotten since.
 */
const DEVICE_KNOWN_SQL = `COALESCE($2::text IS NOT NULL AND (EXISTS (
    SELECT 1 FROM device_cookies c JOIN known_devices d ON d.id = c.known_device_id
     WHERE c.device_id = $2::text AND d.user_id = users.id
  ) OR $3::timestamptz < users.devices_rowless_before), false)`;

type Timestamp = Date | string | null;
const epochMs = (value: Timestamp): number | null => (value === null ? null : new Date(value).getTime());

export class UsersRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  /**
   * The user whose email has the same normal form (see normaliseEmail) and their password hash, or
   * null. SQL's lower() narrows the search; the normal form decides, because lower() and
   * JavaScript's case folding disagree on a few characters (U+0130 `İ`), and the login-failure
   * limiter keys accounts by the normal form. A disabled account is found too: the login checks its
   * password all the same and then refuses it (accountMaySignIn), as it would a wrong password.
   */
  async findCredentials(email: string, device: PresentedDevice | null = null): Promise<Credentials | null> {
    const row = await this.findRow(email, device);
    if (!row) return null;
    const {
      password_hash: passwordHash,
      devices_valid_after: validAfter,
      disabled_at: disabledAt,
      password_expires_at: expiresAt,
      device_known: deviceKnown,
      ...user
    } = row;
    return {
      user,
      passwordHash,
      devicesValidAfter: epochMs(validAfter),
      disabledAt: epochMs(disabledAt),
      passwordExpiresAt: epochMs(expiresAt),
      deviceKnown,
    };
  }

  /** The account's password hash and the time its temporary password expires; null when no such user. */
  async passwordOf(userId: number): Promise<{ passwordHash: string; expiresAt: number | null } | null> {
    const [row] = await this.db.query<{ password_hash: string; password_expires_at: Timestamp }>(
      'SELECT password_hash, password_expires_at FROM users WHERE id = $1',
      [userId],
    );
    return row ? { passwordHash: row.password_hash, expiresAt: epochMs(row.password_expires_at) } : null;
  }

  /**
   * Whether the account `userId` names may sign in now (it exists and is not disabled): the check
   * every way of signing in makes (password, passkey) before it starts a session.
   */
  async maySignIn(userId: number): Promise<boolean> {
    const rows = await this.db.query<{ id: number }>(
      `SELECT u.id FROM users u WHERE u.id = $1 AND ${maySignInSql('u')}`,
      [userId],
    );
    return rows.length > 0;
  }

  /** The account with this id (disabled or not), or null. */
  async findById(userId: number): Promise<User | null> {
    const [row] = await this.db.query<User>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [userId]);
    return row ?? null;
  }

  /**
   * What the sign-in reads about a presented device, for the account `userId`: when its cookies were
   * last revoked and whether the device is one of its known devices (the same rule as
   * findCredentials); null when no such user.
   */
  async deviceStanding(
    userId: number,
    device: PresentedDevice,
  ): Promise<Pick<Credentials, 'devicesValidAfter' | 'deviceKnown'> | null> {
    const [row] = await this.db.query<{ devices_valid_after: Timestamp; device_known: boolean }>(
      `SELECT devices_valid_after, ${DEVICE_KNOWN_SQL} AS device_known FROM users WHERE id = $1`,
      [userId, device.deviceId, new Date(device.issuedAt).toISOString()],
    );
    return row
      ? { devicesValidAfter: epochMs(row.devices_valid_after), deviceKnown: row.device_known }
      : null;
  }

  /** How many accounts' hashes were made at each cost (the hash without its salt and key). */
  async hashParameterCounts(): Promise<StoredHashCount[]> {
    const rows = await this.db.query<{ parameters: string; accounts: string | number }>(
      String.raw`SELECT regexp_replace(password_hash, '\$[^$]*\$[^$]*$', '') AS parameters, count(*) AS accounts
         FROM users GROUP BY 1 ORDER BY 1`,
    );
    return rows.map((row) => ({ parameters: row.parameters, accounts: Number(row.accounts) }));
  }

  /**
   * The account's row by email, with whether `device` is one of its known devices (one query): a
   * cookie of one of its rows, or one issued before the rows existed (migration 012) that the
   * account has not forgotten since.
   */
  private async findRow(email: string, device: PresentedDevice | null = null) {
    const normal = normaliseEmail(email);
    const rows = await this.db.query<
      User & {
        password_hash: string;
        devices_valid_after: Timestamp;
        disabled_at: Timestamp;
        password_expires_at: Timestamp;
        device_known: boolean;
      }
    >(
      `SELECT ${COLUMNS}, password_hash, devices_valid_after, disabled_at, password_expires_at,
              ${DEVICE_KNOWN_SQL} AS device_known
         FROM users WHERE lower(email) = lower($1)`,
      [normal, device?.deviceId ?? null, device ? new Date(device.issuedAt).toISOString() : null],
    );
    return rows.find((candidate) => normaliseEmail(candidate.email) === normal) ?? null;
  }

  /**
   * Locks the account's row until the transaction ends, as its first step: a change of the account
   * and a sign-in's write (sign-ins.ts) take this row before any other, so they never deadlock, and
   * a sign-in waits for a change it overlaps.
   */
  async lock(userId: number): Promise<void> {
    await this.db.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
  }

  /**
   * The same password at today's cost (a rehash at login), only while the account still has the
   * hash `verified` (a change or reset since the check wins); whether it is temporary does not change.
   */
  async updatePasswordHash(userId: number, passwordHash: string, verified: string): Promise<void> {
    await this.db.query('UPDATE users SET password_hash = $2 WHERE id = $1 AND password_hash = $3', [
      userId,
      passwordHash,
      verified,
    ]);
  }

  /**
   * Gives the account a password of its own (the owner's change, the command line's): no longer
   * temporary, nothing left to change. With `replacing`, only while the account still has that
   * hash (the one its owner's current password was checked against); answers whether it changed.
   */
  async setPassword(userId: number, passwordHash: string, replacing: string | null = null): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE users SET password_hash = $2, must_change_password = false, password_expires_at = NULL
        WHERE id = $1 AND ($3::text IS NULL OR password_hash = $3::text) RETURNING 1`,
      [userId, passwordHash, replacing],
    );
    return rows.length > 0;
  }

  /** Gives the account a temporary password that signs in until `expiresAt` (epoch ms) and must be changed. */
  async setTemporaryPassword(userId: number, passwordHash: string, expiresAt: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE users SET password_hash = $2, must_change_password = true, password_expires_at = $3
        WHERE id = $1 RETURNING 1`,
      [userId, passwordHash, new Date(expiresAt).toISOString()],
    );
    return rows.length > 0;
  }

  /** The reassignment targets: employees that may sign in, as colleagues see them. */
  async listEmployees(): Promise<Colleague[]> {
    return this.db.query<Colleague>(
      `SELECT u.id, u.email, u.name, u.role FROM users u WHERE role = 'employee' AND ${maySignInSql('u')} ORDER BY name, id`,
    );
  }

  /** Whether some admin account may sign in (a start without one creates or asks for the first). */
  async hasActiveAdmin(): Promise<boolean> {
    const rows = await this.db.query<{ id: number }>(
      `SELECT u.id FROM users u WHERE role = 'admin' AND ${maySignInSql('u')} LIMIT 1`,
    );
    return rows.length > 0;
  }

  /**
   * Creates an account under the email's normal form; null when that email already names one
   * (by the normal form, or by the unique index on lower(email) when another writer won a race).
   */
  async create(account: {
    email: string;
    name: string;
    role: Role;
    passwordHash: string;
    /** A temporary password (an admin's add): signs in until then (epoch ms), and must be changed. */
    temporaryUntil?: number;
    /** The app's clock (epoch ms); the database's own time when not given. */
    at?: number;
  }): Promise<User | null> {
    if (await this.findRow(account.email)) return null;
    const temporary = account.temporaryUntil !== undefined;
    const [row] = await this.db.query<User>(
      `INSERT INTO users (email, name, role, password_hash, must_change_password, password_expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7::timestamptz, now()))
       ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${COLUMNS}`,
      [
        normaliseEmail(account.email),
        account.name,
        account.role,
        account.passwordHash,
        temporary,
        temporary ? new Date(account.temporaryUntil!).toISOString() : null,
        account.at === undefined ? null : new Date(account.at).toISOString(),
      ],
    );
    return row ?? null;
  }

  /**
   * Disables the account at `at` (epoch ms) and forgets its known devices (their rows, and the
   * cookies issued until then); false when it was disabled already. Its sessions are the sessions repository's to delete.
   */
  async disable(userId: number, at: number): Promise<boolean> {
    const rows = await this.db.query(
      'UPDATE users SET disabled_at = $2, devices_valid_after = $2 WHERE id = $1 AND disabled_at IS NULL RETURNING id',
      [userId, new Date(at).toISOString()],
    );
    if (rows.length === 0) return false;
    await this.db.query('DELETE FROM known_devices WHERE user_id = $1', [userId]);
    return true;
  }

  /**
   * Revokes the user's device cookies issued until `at` (epoch ms): its browsers are unknown
   * devices again. Never moves the revocation back (a clock set back keeps the later one).
   */
  async forgetDevices(userId: number, at: number): Promise<void> {
    await this.db.query(
      `UPDATE users SET devices_valid_after = GREATEST(COALESCE(devices_valid_after, $2), $2) WHERE id = $1`,
      [userId, new Date(at).toISOString()],
    );
    // Their rows go too: the owner's list of known devices is empty after it.
    await this.db.query('DELETE FROM known_devices WHERE user_id = $1', [userId]);
  }

  /** Lets a disabled account sign in again; false when it was not disabled. */
  async enable(userId: number): Promise<boolean> {
    const rows = await this.db.query(
      'UPDATE users SET disabled_at = NULL WHERE id = $1 AND disabled_at IS NOT NULL RETURNING id',
      [userId],
    );
    return rows.length > 0;
  }

  /** Every account, by id. */
  async list(): Promise<Account[]> {
    const rows = await this.db.query<User & { disabled_at: Timestamp }>(
      `SELECT ${COLUMNS}, disabled_at FROM users ORDER BY id`,
    );
    return rows.map(({ disabled_at, ...user }) => ({ ...user, disabledAt: epochMs(disabled_at) }));
  }
}
