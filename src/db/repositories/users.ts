// Users: lookups by email and id, and the list of reassignment targets.
import { normaliseEmail } from '../../auth/email.ts';
import type { Queryable } from '../database.ts';

export type Role = 'employee' | 'admin';

export interface User {
  id: number;
  email: string;
  name: string;
  role: Role;
}

const COLUMNS = 'id, email, name, role';

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
  async findCredentials(email: string): Promise<{ user: User; passwordHash: string } | null> {
    const normal = normaliseEmail(email);
    const rows = await this.db.query<User & { password_hash: string }>(
      `SELECT ${COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1)`,
      [normal],
    );
    const row = rows.find((candidate) => normaliseEmail(candidate.email) === normal);
    if (!row) return null;
    const { password_hash: passwordHash, ...user } = row;
    return { user, passwordHash };
  }

  async updatePasswordHash(userId: number, passwordHash: string): Promise<void> {
    await this.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash]);
  }

  async listEmployees(): Promise<User[]> {
    return this.db.query<User>(`SELECT ${COLUMNS} FROM users WHERE role = 'employee' ORDER BY name, id`);
  }
}
