// Server-side sessions, keyed by the digest of the session id, so any instance can serve any user.
import { deleteInBatches, PURGE_BATCH } from '../batched-delete.ts';
import type { Queryable } from '../database.ts';
import { maySignInSql, type User, userColumns } from './users.ts';

export interface SessionRecord {
  user: User;
  expiresAt: number;
  /** When the session signed in (epoch ms), or null for a session made before that was recorded. */
  signedInAt: number | null;
  /** The id its owner sees in the list of sessions: random, never the cookie's id nor its digest. */
  publicId: string;
  /** When a request last used it (epoch ms), as last written: at most a minute behind. */
  lastSeenAt: number;
}

/** A session as its owner sees it in the list (docs/rules.md#accounts). */
export interface SessionListing {
  /** The public id. */
  id: string;
  /** ISO-8601, UTC. */
  createdAt: string;
  lastSeenAt: string;
  userAgent: string | null;
}

/** What the database keeps of a new session; the id's digest, never the id. */
export interface NewSession {
  readonly idHash: string;
  readonly userId: number;
  /** Epoch ms. */
  readonly expiresAt: number;
  /** Epoch ms: when it signed in (also its creation and first use). */
  readonly signedInAt: number;
  readonly userAgent: string | null;
}

/**
 * The channel on which an account's change is announced (its id as the payload): its sessions
 * ended, its role, name or password changed. Every instance listens and drops what it cached of
 * that account, so the change holds on every instance at once (auth/sessions.ts).
 */
export const ACCOUNT_CHANGES_CHANNEL = 'tp_account_changes';
/** The live sessions an account keeps: a sign-in beyond ends the least recently used one. */
export const SESSIONS_PER_ACCOUNT_MAX = 50;

/**
 * Announces that `userId`'s account changed. Inside a transaction PostgreSQL delivers it at
 * commit, so no instance drops its cache before the change is visible, nor misses it after.
 */
export async function announceAccountChange(db: Queryable, userId: number): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [ACCOUNT_CHANGES_CHANNEL, String(userId)]);
}

type Timestamp = Date | string;
const ms = (value: Timestamp) => new Date(value).getTime();
const iso = (value: Timestamp) => new Date(value).toISOString();

/** The sessions expired at $1, $2 at most. */
const DELETE_EXPIRED_SESSIONS =
  'DELETE FROM sessions WHERE id_hash IN (SELECT id_hash FROM sessions WHERE expires_at <= $1 LIMIT $2)';

export class SessionsRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  async create(session: NewSession): Promise<void> {
    const at = new Date(session.signedInAt).toISOString();
    await this.db.query(
      `INSERT INTO sessions (id_hash, user_id, expires_at, signed_in_at, created_at, last_seen_at, user_agent)
       VALUES ($1, $2, $3, $4, $4, $4, $5)`,
      [session.idHash, session.userId, new Date(session.expiresAt).toISOString(), at, session.userAgent],
    );
  }

  /**
   * The session with this digest and its user, or null when absent, expired at `now`, or its
   * account may no longer sign in (disabled: its sessions are deleted then, and one a login
   * created meanwhile is refused here).
   */
  async find(idHash: string, now: Date): Promise<SessionRecord | null> {
    const [row] = await this.db.query<
      User & {
        expires_at: Timestamp;
        signed_in_at: Timestamp | null;
        public_id: string;
        last_seen_at: Timestamp | null;
        created_at: Timestamp;
      }
    >(
      `SELECT ${userColumns('u')}, s.expires_at, s.signed_in_at, s.public_id, s.last_seen_at, s.created_at
         FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id_hash = $1 AND s.expires_at > $2 AND ${maySignInSql('u')}`,
      [idHash, now.toISOString()],
    );
    if (!row) return null;
    const { expires_at, signed_in_at, public_id, last_seen_at, created_at, ...user } = row;
    return {
      user,
      expiresAt: ms(expires_at),
      signedInAt: signed_in_at === null ? null : ms(signed_in_at),
      publicId: public_id,
      lastSeenAt: ms(last_seen_at ?? created_at),
    };
  }

  /**
   * Records that the session was used at `at`, unless some instance did so since `notBefore`: the
   * one write a minute that keeps `lastSeenAt` fresh (several instances serving one session do not
   * each write).
   */
  async touch(idHash: string, at: number, notBefore: number): Promise<void> {
    await this.db.query(
      `UPDATE sessions SET last_seen_at = $2
        WHERE id_hash = $1 AND (last_seen_at IS NULL OR last_seen_at < $3)`,
      [idHash, new Date(at).toISOString(), new Date(notBefore).toISOString()],
    );
  }

  /** The user's live sessions at `now`, the most recently used first. */
  async listForUser(userId: number, now: number): Promise<(SessionListing & { idHash: string })[]> {
    const rows = await this.db.query<{
      id_hash: string;
      public_id: string;
      created_at: Timestamp;
      last_seen_at: Timestamp | null;
      user_agent: string | null;
    }>(
      `SELECT id_hash, public_id, created_at, last_seen_at, user_agent FROM sessions
        WHERE user_id = $1 AND expires_at > $2
        ORDER BY COALESCE(last_seen_at, created_at) DESC, created_at DESC`,
      [userId, new Date(now).toISOString()],
    );
    return rows.map((row) => ({
      idHash: row.id_hash,
      id: row.public_id,
      createdAt: iso(row.created_at),
      lastSeenAt: iso(row.last_seen_at ?? row.created_at),
      userAgent: row.user_agent,
    }));
  }

  /** Whether the user's session with digest `idHash` is still there; locks it until the transaction ends. */
  async exists(userId: number, idHash: string): Promise<boolean> {
    const rows = await this.db.query(
      'SELECT 1 FROM sessions WHERE id_hash = $1 AND user_id = $2 FOR UPDATE',
      [idHash, userId],
    );
    return rows.length > 0;
  }

  /** Ends one session (a logout), and announces its account's change so no instance serves it from a cache. */
  async delete(idHash: string): Promise<void> {
    await this.db.query(
      `WITH gone AS (DELETE FROM sessions WHERE id_hash = $1 RETURNING user_id)
       SELECT pg_notify($2, user_id::text) FROM gone`,
      [idHash, ACCOUNT_CHANGES_CHANNEL],
    );
  }

  // Ending sessions announces the account's change (ACCOUNT_CHANGES_CHANNEL), in the caller's
  // transaction if there is one: every instance then stops serving them from its cache.

  /** Ends the user's session with this public id; false when the user has none such (another's, ended, unknown). */
  async deleteByPublicId(userId: number, publicId: string): Promise<boolean> {
    const rows = await this.db.query(
      'DELETE FROM sessions WHERE user_id = $1 AND public_id = $2 RETURNING 1',
      [userId, publicId],
    );
    if (rows.length > 0) await announceAccountChange(this.db, userId);
    return rows.length > 0;
  }

  /** Ends every session of the user but the one with digest `keepIdHash`; answers how many ended. */
  async deleteOthers(userId: number, keepIdHash: string): Promise<number> {
    const rows = await this.db.query(
      'DELETE FROM sessions WHERE user_id = $1 AND id_hash <> $2 RETURNING 1',
      [userId, keepIdHash],
    );
    if (rows.length > 0) await announceAccountChange(this.db, userId);
    return rows.length;
  }

  /** Ends every session of the user (a disabled account, a reset); answers how many there were. */
  async deleteForUser(userId: number): Promise<number> {
    const rows = await this.db.query('DELETE FROM sessions WHERE user_id = $1 RETURNING 1', [userId]);
    await announceAccountChange(this.db, userId);
    return rows.length;
  }

  /**
   * Deletes the sessions expired at `now`, `batch` rows per statement so that a large backlog never
   * holds one long transaction (deleteInBatches); returns how many went. Idempotent: instances may race on it.
   */
  deleteExpired(now: Date, batch = PURGE_BATCH): Promise<number> {
    return deleteInBatches(this.db, DELETE_EXPIRED_SESSIONS, [now.toISOString()], batch);
  }
}
