// The accounts as an admin sees and changes them (docs/rules.md#accounts), keeping an enabled admin.
import type { Role } from '../../domain.ts';
import type { Queryable } from '../database.ts';
import { type User, userColumns } from './users.ts';

/** An account as the People page shows it. */
export interface AdminUser extends User {
  disabled: boolean;
  /** ISO-8601, UTC. */
  createdAt: string;
  /** The last sign-in, by password or passkey; null for never. */
  lastSignInAt: string | null;
}

type Timestamp = Date | string;

interface AdminUserRow extends User {
  disabled_at: Timestamp | null;
  created_at: Timestamp;
  last_sign_in_at: Timestamp | null;
}

const COLUMNS = `${userColumns('u')}, u.disabled_at, u.created_at, u.last_sign_in_at`;

const toAdminUser = ({ disabled_at, created_at, last_sign_in_at, ...user }: AdminUserRow): AdminUser => ({
  ...user,
  disabled: disabled_at !== null,
  createdAt: new Date(created_at).toISOString(),
  lastSignInAt: last_sign_in_at === null ? null : new Date(last_sign_in_at).toISOString(),
});

/** What an admin's edit would do to the accounts that may administer: refused, or the row to change. */
export type AdminEditCheck =
  | { readonly ok: true; readonly target: AdminUser }
  | { readonly ok: false; readonly why: 'no-such-account' | 'actor-not-admin' | 'self' | 'last-admin' };

export class AdminUsersRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  /** Every account, by id. */
  async list(): Promise<AdminUser[]> {
    const rows = await this.db.query<AdminUserRow>(`SELECT ${COLUMNS} FROM users u ORDER BY u.id`);
    return rows.map(toAdminUser);
  }

  async find(userId: number): Promise<AdminUser | null> {
    const [row] = await this.db.query<AdminUserRow>(`SELECT ${COLUMNS} FROM users u WHERE u.id = $1`, [
      userId,
    ]);
    return row ? toAdminUser(row) : null;
  }

  /**
   * Whether `actorId` may apply an edit to `targetId` that ends the target's admin rights (a
   * demotion or a disable) when `removesAdmin` is true. Run inside the edit's transaction: it locks
   * the rows of every enabled admin, in id order, and the target's, so two admins demoting or
   * disabling each other at once are taken one after the other and the second sees what the first
   * left (PostgreSQL re-reads a row it waited for: a demoted admin no longer matches). So no two
   * edits can together leave no enabled admin.
   */
  async checkEdit(actorId: number, targetId: number, removesAdmin: boolean): Promise<AdminEditCheck> {
    const admins = await this.db.query<{ id: number }>(
      `SELECT u.id FROM users u WHERE u.role = 'admin' AND u.disabled_at IS NULL ORDER BY u.id FOR UPDATE`,
    );
    const [row] = await this.db.query<AdminUserRow>(
      `SELECT ${COLUMNS} FROM users u WHERE u.id = $1 FOR UPDATE`,
      [targetId],
    );
    if (!admins.some((admin) => admin.id === actorId)) return { ok: false, why: 'actor-not-admin' };
    if (!row) return { ok: false, why: 'no-such-account' };
    const target = toAdminUser(row);
    if (removesAdmin && targetId === actorId) return { ok: false, why: 'self' };
    const targetIsEnabledAdmin = admins.some((admin) => admin.id === targetId);
    if (removesAdmin && targetIsEnabledAdmin && admins.length <= 1) return { ok: false, why: 'last-admin' };
    return { ok: true, target };
  }

  /**
   * Whether `actorId` is an enabled admin, read and locked (shared) until the transaction ends: an
   * admin's change that does not go through checkEdit runs only while its actor is still an admin,
   * and a demotion or a disable of that actor waits for it (or, first, makes it refuse).
   */
  async actorStillAdmin(actorId: number): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM users WHERE id = $1 AND role = 'admin' AND disabled_at IS NULL FOR SHARE`,
      [actorId],
    );
    return rows.length > 0;
  }

  async rename(userId: number, name: string): Promise<void> {
    await this.db.query('UPDATE users SET name = $2 WHERE id = $1', [userId, name]);
  }

  async setRole(userId: number, role: Role): Promise<void> {
    await this.db.query('UPDATE users SET role = $2 WHERE id = $1', [userId, role]);
  }
}
