// Security events: batched inserts (capped per account), newest-first keyset pages, the purge.
import type { SecurityEvent, SecurityEventType } from '../../security-event.ts';
import { type AgedRows, deleteOlderThan, PURGE_BATCH } from '../batched-delete.ts';
import { columnsOf, type Queryable } from '../database.ts';

/** An event ready to store: what was reported (a part left out, null), stamped with its time and instance. */
export interface NewSecurityEvent extends Required<SecurityEvent> {
  readonly at: number;
  readonly instance: string;
}

/** A window's count is purged a day after the window starts; an event written later still (held up by an outage) counts afresh. */
export const EVENT_WINDOWS_KEPT_MS = 24 * 60 * 60 * 1000;

export interface StoredSecurityEvent {
  id: number;
  /** ISO-8601, UTC; a summary's: its first event's. */
  at: string;
  type: SecurityEventType;
  control: string;
  email: string | null;
  address: string | null;
  instance: string;
  actorId: number | null;
  /** A summary only: how many events of this kind it stands for (1 or more). */
  count?: number;
  /** A summary only: the time of its latest event. */
  lastAt?: string;
  /** A summary only: the first few distinct addresses its events came from, in order. */
  addresses?: readonly string[];
  /** A summary only: some of its events came from addresses beyond `addresses`. */
  moreAddresses?: boolean;
}

/** Where a newest-first page continues: strictly older than this event in (at, id) order. */
export interface SecurityEventPosition {
  readonly atMs: number;
  readonly id: number;
}

interface SecurityEventRow {
  /** bigserial: text from `pg`, a bigint or number from PGlite; ids stay far below 2^53, so a number is exact. */
  id: string | number | bigint;
  at: Date | string;
  type: SecurityEventType;
  control: string;
  email: string | null;
  address: string | null;
  instance: string;
  actor_id: number | null;
  repeats: number | null;
  last_at: Date | string | null;
  addresses: string[] | null;
  more_addresses: boolean | null;
}

const COLUMNS =
  'id, at, type, control, email, address, instance, actor_id, repeats, last_at, addresses, more_addresses';

const toEvent = (row: SecurityEventRow): StoredSecurityEvent => {
  const event: StoredSecurityEvent = {
    id: Number(row.id),
    at: new Date(row.at).toISOString(),
    type: row.type,
    control: row.control,
    email: row.email,
    address: row.address,
    instance: row.instance,
    actorId: row.actor_id,
  };
  // The summary's fields only on a summary: consumers of the plain event see no change.
  if (row.repeats === null) return event;
  return {
    ...event,
    count: row.repeats,
    lastAt: new Date(row.last_at ?? row.at).toISOString(),
    addresses: row.addresses ?? [],
    moreAddresses: row.more_addresses === true,
  };
};

/** The events by age, the oldest first by the time index; and the cap's windows by when they started. */
const EVENTS_BY_AGE: AgedRows = { table: 'security_events', key: 'id', at: 'at', order: 'at, id' };
const WINDOWS_BY_AGE: AgedRows = {
  table: 'security_event_windows',
  key: 'email, window_start',
  at: 'window_start',
  order: 'window_start',
};

export class SecurityEventsRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  /**
   * Stores a batch in one statement (one round trip, all or nothing); the database folds an
   * account's repeats past its cap. The rows go in account order: each takes its account's window
   * row, so two batches at once take them in the same order and never deadlock.
   */
  async insert(events: readonly NewSecurityEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.db.query(
      `INSERT INTO security_events (at, type, control, email, address, instance, actor_id)
       SELECT to_timestamp(at / 1000.0), type, control, email, address, instance, actor_id
         FROM unnest($1::float8[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[])
           WITH ORDINALITY AS t(at, type, control, email, address, instance, actor_id, n)
        ORDER BY email, n`,
      columnsOf(events, ['at', 'type', 'control', 'email', 'address', 'instance', 'actorId']),
    );
  }

  /** Up to `limit` events, newest first (ties on time broken by id), strictly older than `before`. */
  async newestFirst(limit: number, before?: SecurityEventPosition): Promise<StoredSecurityEvent[]> {
    const rows = before
      ? await this.db.query<SecurityEventRow>(
          `SELECT ${COLUMNS} FROM security_events
            WHERE (at, id) < (to_timestamp($1 / 1000.0), $2::bigint)
            ORDER BY at DESC, id DESC LIMIT $3`,
          [before.atMs, before.id, limit],
        )
      : await this.db.query<SecurityEventRow>(
          `SELECT ${COLUMNS} FROM security_events ORDER BY at DESC, id DESC LIMIT $1`,
          [limit],
        );
    return rows.map(toEvent);
  }

  /**
   * Up to `limit` events about the account `email` (its normal form), newest first, strictly older
   * than `before`: its owner's own list (docs/rules.md#accounts).
   */
  async newestFirstAbout(
    email: string,
    limit: number,
    before?: SecurityEventPosition,
  ): Promise<StoredSecurityEvent[]> {
    const rows = before
      ? await this.db.query<SecurityEventRow>(
          `SELECT ${COLUMNS} FROM security_events
            WHERE email = $1 AND (at, id) < (to_timestamp($2 / 1000.0), $3::bigint)
            ORDER BY at DESC, id DESC LIMIT $4`,
          [email, before.atMs, before.id, limit],
        )
      : await this.db.query<SecurityEventRow>(
          `SELECT ${COLUMNS} FROM security_events WHERE email = $1 ORDER BY at DESC, id DESC LIMIT $2`,
          [email, limit],
        );
    return rows.map(toEvent);
  }

  /**
   * Deletes every event older than `cutoffMs`, `batch` rows per statement (oldest first, by the
   * time index), until a statement finds fewer (deleteOlderThan); answers how many went.
   */
  deleteBefore(cutoffMs: number, batch = PURGE_BATCH): Promise<number> {
    return deleteOlderThan(this.db, EVENTS_BY_AGE, cutoffMs, batch);
  }

  /** Deletes the per-account windows of the cap that started before `cutoffMs`, in batches too; answers how many went. */
  deleteWindowsBefore(cutoffMs: number, batch = PURGE_BATCH): Promise<number> {
    return deleteOlderThan(this.db, WINDOWS_BY_AGE, cutoffMs, batch);
  }
}
