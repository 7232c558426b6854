// Users: lookups by email and id, and the list of reassignment targets.
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
  constructor(private readonly db: Queryable) {}

  /** The user with this email (case-insensitive) and their password hash, or null. */
  async findCredentials(email: string): Promise<{ user: User; passwordHash: string } | null> {
    const [row] = await this.db.query<User & { password_hash: string }>(
      `SELECT ${COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1)`,
      [email],
    );
    if (!row) return null;
    const { password_hash: passwordHash, ...user } = row;
    return { user, passwordHash };
  }

  async listEmployees(): Promise<User[]> {
    return this.db.query<User>(`SELECT ${COLUMNS} FROM users WHERE role = 'employee' ORDER BY name, id`);
  }
}
