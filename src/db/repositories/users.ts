// Users: lookups by email and id, and the list of reassignment targets.
import { normaliseEmail } from '../../email.ts';
import type { Queryable } from '../database.ts';

export type Role = 'employee' | 'admin';

export interface User {
  id: number;
  email: string;
  name: string;
  role: Role;
}

const COLUMNS = 'id, email, name, role';

export interface Credentials {
  user: User;
  passwordHash: string;
  /** Device cookies issued at or before this time (epoch ms) are revoked; null when none are. */
  devicesValidAfter: number | null;
}

export class UsersRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  /**
   * The user whose email has the same normal form (see normaliseEmail) and their password hash, or
   * null. SQL's lower() narrows the search; the normal form decides, because lower() and
   * JavaScript's case folding disagree on a few characters (U+0130 `İ`), and the login-failure
   * limiter keys accounts by the normal form.
   */
  async findCredentials(email: string): Promise<Credentials | null> {
    const row = await this.findRow(email);
    if (!row) return null;
    const { password_hash: passwordHash, devices_valid_after: validAfter, ...user } = row;
    return {
      user,
      passwordHash,
      devicesValidAfter: validAfter === null ? null : new Date(validAfter).getTime(),
    };
  }

  /** When the user's device cookies were last revoked (epoch ms), or null; undefined when no such user. */
  async devicesValidAfter(userId: number): Promise<number | null | undefined> {
    const rows = await this.db.query<{ devices_valid_after: Date | string | null }>(
      'SELECT devices_valid_after FROM users WHERE id = $1',
      [userId],
    );
    if (rows.length === 0) return undefined;
    const validAfter = rows[0]!.devices_valid_after;
    return validAfter === null ? null : new Date(validAfter).getTime();
  }

  /** Revokes every device cookie of the account `email` names that was issued at or before `at`. */
  async revokeDevices(email: string, at: number): Promise<void> {
    const row = await this.findRow(email);
    if (row)
      await this.db.query('UPDATE users SET devices_valid_after = $2 WHERE id = $1', [
        row.id,
        new Date(at).toISOString(),
      ]);
  }

  private async findRow(email: string) {
    const normal = normaliseEmail(email);
    const rows = await this.db.query<
      User & { password_hash: string; devices_valid_after: Date | string | null }
    >(`SELECT ${COLUMNS}, password_hash, devices_valid_after FROM users WHERE lower(email) = lower($1)`, [
      normal,
    ]);
    return rows.find((candidate) => normaliseEmail(candidate.email) === normal) ?? null;
  }

  async updatePasswordHash(userId: number, passwordHash: string): Promise<void> {
    await this.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash]);
  }

  async listEmployees(): Promise<User[]> {
    return this.db.query<User>(`SELECT ${COLUMNS} FROM users WHERE role = 'employee' ORDER BY name, id`);
  }
}
