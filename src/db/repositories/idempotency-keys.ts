// Idempotency keys: the in-flight mark a request claims, the answer its transaction stores, the purge.
import { type AgedRows, deleteOlderThan, PURGE_BATCH } from '../batched-delete.ts';
import type { Queryable } from '../database.ts';

/** One caller's key: keys belong to their user, so two users' equal keys are unrelated. */
export interface KeyRef {
  readonly userId: number;
  readonly key: string;
}

/**
 * The row of a key another request holds or answered, as read. `route` is the route it was
 * claimed on (`PATCH /api/employee/tasks/bulk`; null for a row claimed before routes were kept):
 * a repeat is free only there.
 */
export type KeyHolder =
  /**
   * Another request has the key and has not answered yet (on this instance or another). `claim`
   * is null when the key changed hands under a claim twice: there is no one row to count against.
   */
  | {
      readonly kind: 'in-flight';
      readonly claim: string | null;
      readonly route: string | null;
      readonly freeRepeats: number;
    }
  /** A request with the key was answered 200: its body, and its request body's fingerprint. */
  | {
      readonly kind: 'answered';
      readonly claim: string;
      readonly route: string | null;
      readonly freeRepeats: number;
      readonly fingerprint: string;
      readonly response: string;
    };

/** What a claim found: the key is now this request's, or another request holds it. */
export type ClaimOutcome = { readonly kind: 'claimed' } | KeyHolder;

/** The moment a key is looked at: a mark claimed before `staleBeforeMs` no longer blocks. */
export interface KeyLook extends KeyRef {
  readonly nowMs: number;
  /** A mark claimed before this no longer blocks: its request cannot still be running. */
  readonly staleBeforeMs: number;
}

export interface ClaimRequest extends KeyLook {
  /** A random token naming this request's claim. */
  readonly claim: string;
  /** The route of the request (method and pattern): the key's repeats are free on it alone. */
  readonly route: string;
  /** When the mark may be purged if nothing else happens to it (now plus the TTL). */
  readonly expiresAtMs: number;
}

/** How often expired keys are purged: ten minutes' lag on a 24-hour TTL. */
export const IDEMPOTENCY_KEY_PURGE_INTERVAL_MS = 10 * 60 * 1000;

/*
 * The claim, one autocommitted statement: a new row, or the row of a key whose answer expired
 * (not purged yet) or whose mark is stale, taken over. A key held otherwise is left alone and
 * nothing is returned: the unique key (user_id, key) decides between two requests racing, on one
 * instance or several, and the loser reads what the winner left.
 */
const CLAIM_SQL = `
INSERT INTO idempotency_keys AS k (user_id, key, claim, claimed_at, expires_at, route)
VALUES ($1, $2, $3, to_timestamp($4 / 1000.0), to_timestamp($6 / 1000.0), $7)
ON CONFLICT (user_id, key) DO UPDATE
   SET claim = EXCLUDED.claim, claimed_at = EXCLUDED.claimed_at, expires_at = EXCLUDED.expires_at,
       route = EXCLUDED.route,
       fingerprint = NULL, response = NULL, free_repeats = 0
 WHERE k.expires_at <= EXCLUDED.claimed_at
    OR (k.response IS NULL AND k.claimed_at <= to_timestamp($5 / 1000.0))
RETURNING 1 AS claimed`;

/** The columns a holder is made of. */
const HOLDER_COLUMNS = 'claim, route, fingerprint, response, free_repeats';

interface HolderRow {
  claim: string;
  route: string | null;
  fingerprint: string | null;
  response: string | null;
  free_repeats: number;
}

function holderOf(row: HolderRow): KeyHolder {
  const { claim, route, free_repeats: freeRepeats } = row;
  if (row.response === null || row.fingerprint === null)
    return { kind: 'in-flight', claim, route, freeRepeats };
  return {
    kind: 'answered',
    claim,
    route,
    freeRepeats,
    fingerprint: row.fingerprint,
    response: row.response,
  };
}

/** The rows by when they expire, the oldest first. */
const KEYS_BY_EXPIRY: AgedRows = {
  table: 'idempotency_keys',
  key: 'user_id, key',
  at: 'expires_at',
  order: 'expires_at',
};

export class IdempotencyKeysRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  /**
   * The row that holds `key` now, read and nothing else: null when the key is free (no row, an
   * expired answer, a stale mark), which is what a claim of it would take. A request's key is
   * looked at so before the limiter decides (a read writes nothing if the limiter then refuses).
   */
  async find(look: KeyLook): Promise<KeyHolder | null> {
    const [row] = await this.db.query<HolderRow>(
      `SELECT ${HOLDER_COLUMNS} FROM idempotency_keys
        WHERE user_id = $1 AND key = $2 AND expires_at > to_timestamp($3 / 1000.0)
          AND (response IS NOT NULL OR claimed_at > to_timestamp($4 / 1000.0))`,
      [look.userId, look.key, look.nowMs, look.staleBeforeMs],
    );
    return row ? holderOf(row) : null;
  }

  /**
   * Claims `key` for one request, or says who holds it. One statement when the key is free (the
   * usual case), a second to read the holder's row when it is not. A holder that let go between
   * the two (its answer was not a 200) is claimed over once more; if that also loses, the key is
   * reported in flight, which a client waits out (Retry-After: 1).
   */
  async claim(request: ClaimRequest): Promise<ClaimOutcome> {
    const { userId, key, claim, route, nowMs, staleBeforeMs, expiresAtMs } = request;
    for (let round = 0; round < 2; round++) {
      const claimed = await this.db.query(CLAIM_SQL, [
        userId,
        key,
        claim,
        nowMs,
        staleBeforeMs,
        expiresAtMs,
        route,
      ]);
      if (claimed.length > 0) return { kind: 'claimed' };
      const [held] = await this.db.query<HolderRow>(
        `SELECT ${HOLDER_COLUMNS} FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
        [userId, key],
      );
      if (held) return holderOf(held);
    }
    return { kind: 'in-flight', claim: null, route: null, freeRepeats: 0 };
  }

  /**
   * Takes one of the free repeats of the row `claim` names, if fewer than `free` were taken: one
   * statement, so of two repeats racing for the last one (on one instance or two) exactly one gets
   * true. False when none is left, or the row is no longer that claim's (released, or taken over).
   */
  async takeFreeRepeat(ref: KeyRef & { readonly claim: string; readonly free: number }): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE idempotency_keys SET free_repeats = free_repeats + 1
        WHERE user_id = $1 AND key = $2 AND claim = $3 AND free_repeats < $4
       RETURNING 1 AS taken`,
      [ref.userId, ref.key, ref.claim, ref.free],
    );
    return rows.length > 0;
  }

  /**
   * Stores the answer of the request holding `claim`, on `connection`: inside the transaction that
   * did the work, so the two commit together. False when the claim is no longer this request's
   * (taken over as stale): the caller must then roll its work back.
   */
  async storeAnswer(
    connection: Queryable,
    answer: KeyRef & {
      readonly claim: string;
      readonly fingerprint: string;
      readonly response: string;
      readonly expiresAtMs: number;
    },
  ): Promise<boolean> {
    const rows = await connection.query(
      `UPDATE idempotency_keys SET fingerprint = $4, response = $5, expires_at = to_timestamp($6 / 1000.0)
        WHERE user_id = $1 AND key = $2 AND claim = $3 AND response IS NULL
       RETURNING 1 AS stored`,
      [answer.userId, answer.key, answer.claim, answer.fingerprint, answer.response, answer.expiresAtMs],
    );
    return rows.length > 0;
  }

  /**
   * Deletes the in-flight mark of `claim` (its request was not answered 200), so the key may be
   * sent again at once. A stored answer is never deleted here: if the transaction did commit, the
   * row keeps it whatever the caller believed.
   */
  async release(ref: KeyRef & { readonly claim: string }): Promise<void> {
    await this.db.query(
      'DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND claim = $3 AND response IS NULL',
      [ref.userId, ref.key, ref.claim],
    );
  }

  /** Deletes the rows expired before `cutoffMs`, oldest first, `batch` per statement; answers how many went. */
  deleteExpired(cutoffMs: number, batch = PURGE_BATCH): Promise<number> {
    return deleteOlderThan(this.db, KEYS_BY_EXPIRY, cutoffMs, batch);
  }
}
