// Server-side sessions, keyed by the digest of the session id, so any instance can serve any user.
import type { Queryable } from '../database.ts';
import { maySignInSql, type User } from './users.ts';

export interface SessionRecord {
  user: User;
  expiresAt: number;
  /** When the session signed in (epoch ms), or null for a session made before that was recorded. */
  signedInAt: number | null;
}

export class SessionsRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  async create(idHash: string, userId: number, expiresAt: Date, signedInAt: Date): Promise<void> {
    await this.db.query(
      'INSERT INTO sessions (id_hash, user_id, expires_at, signed_in_at) VALUES ($1, $2, $3, $4)',
      [idHash, userId, expiresAt.toISOString(), signedInAt.toISOString()],
    );
  }

  /**
   * The session with this digest and its user, or null when absent, expired at `now`, or its
   * account may no longer sign in (disabled: its sessions are deleted then, and one a login
   * created meanwhile is refused here).
   */
  async find(idHash: string, now: Date): Promise<SessionRecord | null> {
    const [row] = await this.db.query<
      User & { expires_at: Date | string; signed_in_at: Date | string | null }
    >(
      `SELECT u.id, u.email, u.name, u.role, s.expires_at, s.signed_in_at
         FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id_hash = $1 AND s.expires_at > $2 AND ${maySignInSql('u')}`,
      [idHash, now.toISOString()],
    );
    if (!row) return null;
    const { expires_at, signed_in_at, ...user } = row;
    return {
      user,
      expiresAt: new Date(expires_at).getTime(),
      signedInAt: signed_in_at === null ? null : new Date(signed_in_at).getTime(),
    };
  }

  async delete(idHash: string): Promise<void> {
    await this.db.query('DELETE FROM sessions WHERE id_hash = $1', [idHash]);
  }

  /** Ends every session of the user (a disabled account); answers how many there were. */
  async deleteForUser(userId: number): Promise<number> {
    const rows = await this.db.query('DELETE FROM sessions WHERE user_id = $1 RETURNING 1', [userId]);
    return rows.length;
  }

  /**
   * Deletes the sessions expired at `now`, `batchSize` rows per statement so that a large backlog
   * never holds one long transaction; returns how many went. Idempotent: instances may race on it.
   */
  async deleteExpired(now: Date, batchSize = 5000): Promise<number> {
    let deleted = 0;
    for (;;) {
      const rows = await this.db.query(
        `DELETE FROM sessions WHERE id_hash IN (
           SELECT id_hash FROM sessions WHERE expires_at <= $1 LIMIT $2
         ) RETURNING 1`,
        [now.toISOString(), batchSize],
      );
      deleted += rows.length;
      if (rows.length < batchSize) return deleted;
    }
  }
}
