// Passkeys: an account's WebAuthn credentials (key and counter kept, never listed), its user handle.
import { randomBytes } from 'node:crypto';
import { type Database, inTransaction, type Queryable } from '../database.ts';
import { type User, userColumns } from './users.ts';

/** What the account's owner sees of a passkey (docs/rules.md#passkeys): never the key or the counter. */
export interface Passkey {
  id: number;
  name: string;
  /** ISO-8601, UTC. */
  createdAt: string;
  lastUsedAt: string | null;
}

/** What a sign-in needs to verify an assertion: the stored credential and whose it is. */
export interface StoredCredential {
  /** The row's id (the Passkey's). */
  readonly id: number;
  /** base64url, as the browser sends it. */
  readonly credentialId: string;
  /** The COSE public key, base64url. */
  readonly publicKey: string;
  readonly counter: number;
  readonly transports: readonly string[];
  readonly user: User;
  /** The account's WebAuthn user handle (base64url), which a discoverable credential returns. */
  readonly userHandle: string | null;
  /** When the account was disabled (epoch ms), or null: see accountMaySignIn. */
  readonly disabledAt: number | null;
}

/** A credential to store, as the registration's verification found it. */
export interface NewCredential {
  readonly credentialId: string;
  readonly publicKey: string;
  readonly counter: number;
  readonly transports: readonly string[];
  readonly name: string;
}

interface PasskeyRow {
  id: number;
  name: string;
  created_at: Date | string;
  last_used_at: Date | string | null;
}

const toPasskey = (row: PasskeyRow): Passkey => ({
  id: row.id,
  name: row.name,
  createdAt: new Date(row.created_at).toISOString(),
  lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at).toISOString(),
});

const PASSKEY_COLUMNS = 'id, name, created_at, last_used_at';

/**
 * Removes the user's passkeys on `connection` (inside the caller's transaction, beside its
 * security events): all of them, or only the one `id` names. Answers those removed, oldest first;
 * none when the user has no such passkey.
 */
export async function deletePasskeys(connection: Queryable, userId: number, id?: number): Promise<Passkey[]> {
  const rows =
    id === undefined
      ? await connection.query<PasskeyRow>(
          `DELETE FROM passkeys WHERE user_id = $1 RETURNING ${PASSKEY_COLUMNS}`,
          [userId],
        )
      : await connection.query<PasskeyRow>(
          `DELETE FROM passkeys WHERE user_id = $1 AND id = $2 RETURNING ${PASSKEY_COLUMNS}`,
          [userId, id],
        );
  return rows.map(toPasskey).sort((a, b) => a.id - b.id);
}

export class PasskeysRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /** The user's passkeys, oldest first. */
  async list(userId: number): Promise<Passkey[]> {
    const rows = await this.db.query<PasskeyRow>(
      `SELECT ${PASSKEY_COLUMNS} FROM passkeys WHERE user_id = $1 ORDER BY id`,
      [userId],
    );
    return rows.map(toPasskey);
  }

  /** The credential ids (and transports) of the user's passkeys: what registration excludes. */
  async credentialsOf(userId: number): Promise<{ id: string; transports: string[] }[]> {
    const rows = await this.db.query<{ credential_id: string; transports: string[] }>(
      'SELECT credential_id, transports FROM passkeys WHERE user_id = $1 ORDER BY id',
      [userId],
    );
    return rows.map((row) => ({ id: row.credential_id, transports: row.transports }));
  }

  async count(userId: number): Promise<number> {
    const [row] = await this.db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM passkeys WHERE user_id = $1',
      [userId],
    );
    return row?.count ?? 0;
  }

  /** The user's WebAuthn user handle, made (random, 32 bytes) on first use; it never changes after. */
  async userHandle(userId: number): Promise<string> {
    const [row] = await this.db.query<{ passkey_handle: string }>(
      `UPDATE users SET passkey_handle = COALESCE(passkey_handle, $2) WHERE id = $1 RETURNING passkey_handle`,
      [userId, randomBytes(32).toString('base64url')],
    );
    if (!row) throw new Error(`no user ${userId}`);
    return row.passkey_handle;
  }

  /**
   * Stores a passkey unless the user already has `max`: the user's row is locked first, so two
   * registrations at once cannot both see room for one more. Null when the limit is reached;
   * 'taken' when the credential is already registered (to anyone).
   */
  async add(
    userId: number,
    credential: NewCredential,
    max: number,
    at: number,
  ): Promise<Passkey | null | 'taken'> {
    return this.db.withConnection((connection) =>
      inTransaction(connection, async () => {
        await connection.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
        const [counted] = await connection.query<{ count: number; taken: boolean }>(
          `SELECT (SELECT count(*)::int FROM passkeys WHERE user_id = $1) AS count,
                  EXISTS (SELECT 1 FROM passkeys WHERE credential_id = $2) AS taken`,
          [userId, credential.credentialId],
        );
        if (counted!.taken) return 'taken';
        if (counted!.count >= max) return null;
        const [row] = await connection.query<PasskeyRow>(
          `INSERT INTO passkeys (user_id, credential_id, public_key, counter, transports, name, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${PASSKEY_COLUMNS}`,
          [
            userId,
            credential.credentialId,
            credential.publicKey,
            credential.counter,
            [...credential.transports],
            credential.name,
            new Date(at).toISOString(),
          ],
        );
        return toPasskey(row!);
      }),
    );
  }

  /** Renames one of the user's passkeys; null when the user has no passkey with this id. */
  async rename(userId: number, id: number, name: string): Promise<Passkey | null> {
    const [row] = await this.db.query<PasskeyRow>(
      `UPDATE passkeys SET name = $3 WHERE id = $2 AND user_id = $1 RETURNING ${PASSKEY_COLUMNS}`,
      [userId, id, name],
    );
    return row ? toPasskey(row) : null;
  }

  /** Removes one of the user's passkeys; false when the user has no passkey with this id. */
  async remove(userId: number, id: number): Promise<boolean> {
    const rows = await this.db.query('DELETE FROM passkeys WHERE id = $2 AND user_id = $1 RETURNING 1', [
      userId,
      id,
    ]);
    return rows.length > 0;
  }

  /** The stored credential the browser names, with its account; null when none is registered. */
  async findCredential(credentialId: string): Promise<StoredCredential | null> {
    const [row] = await this.db.query<
      User & {
        passkey_id: number;
        credential_id: string;
        public_key: string;
        counter: string | number | bigint;
        transports: string[];
        passkey_handle: string | null;
        disabled_at: Date | string | null;
      }
    >(
      `SELECT p.id AS passkey_id, p.credential_id, p.public_key, p.counter, p.transports,
              ${userColumns('u')}, u.passkey_handle, u.disabled_at
         FROM passkeys p JOIN users u ON u.id = p.user_id
        WHERE p.credential_id = $1`,
      [credentialId],
    );
    if (!row) return null;
    return {
      id: row.passkey_id,
      credentialId: row.credential_id,
      publicKey: row.public_key,
      counter: Number(row.counter),
      transports: row.transports,
      user: {
        id: row.id,
        email: row.email,
        name: row.name,
        role: row.role,
        mustChangePassword: row.mustChangePassword,
      },
      userHandle: row.passkey_handle,
      disabledAt: row.disabled_at === null ? null : new Date(row.disabled_at).getTime(),
    };
  }

  /**
   * Records a sign-in: the new counter and the time, only if the stored counter is still the one
   * the assertion was checked against (`seen`), so two sign-ins racing with one counter value
   * cannot both pass. False when it moved meanwhile (or the passkey was removed).
   */
  async recordUse(id: number, seen: number, counter: number, at: number): Promise<boolean> {
    const rows = await this.db.query(
      'UPDATE passkeys SET counter = $3, last_used_at = $4 WHERE id = $1 AND counter = $2 RETURNING 1',
      [id, seen, counter, new Date(at).toISOString()],
    );
    return rows.length > 0;
  }
}
