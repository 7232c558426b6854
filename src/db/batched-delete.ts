// Purges in batches: one DELETE of a large backlog could outlast the statement timeout, for ever.
import type { Queryable } from './database.ts';

/** Rows one purge statement deletes at most: tens of milliseconds, far below the statement timeout. */
export const PURGE_BATCH = 5000;

/**
 * Runs `deletion` (a DELETE of at most `batch` rows, `batch` its last parameter, with no RETURNING
 * of its own) again and again until one deletes fewer than `batch`; answers how many rows went.
 * A batch takes milliseconds, so any backlog goes, and other queries run between the batches.
 */
export async function deleteInBatches(
  db: Queryable,
  deletion: string,
  params: readonly unknown[],
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await db.query<{ count: string | number }>(
      `WITH gone AS (${deletion} RETURNING 1) SELECT count(*) AS count FROM gone`,
      [...params, batch],
    );
    const deleted = Number(rows[0]?.count ?? 0);
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** Rows a purge by age deletes: their table, the columns that name one, its time column, the oldest first. */
export interface AgedRows {
  readonly table: string;
  readonly key: string;
  readonly at: string;
  /** The ORDER BY that puts the oldest first (an index's). */
  readonly order: string;
}

/** Deletes `rows` whose time is before `cutoffMs`, the oldest first, `batch` per statement; answers how many went. */
export function deleteOlderThan(
  db: Queryable,
  rows: AgedRows,
  cutoffMs: number,
  batch = PURGE_BATCH,
): Promise<number> {
  const { table, key, at, order } = rows;
  return deleteInBatches(
    db,
    `DELETE FROM ${table} WHERE (${key}) IN (
       SELECT ${key} FROM ${table} WHERE ${at} < to_timestamp($1 / 1000.0) ORDER BY ${order} LIMIT $2
     )`,
    [cutoffMs],
    batch,
  );
}
