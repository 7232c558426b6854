// The purge of expired security events in batches: a backlog of any size, each statement small.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PURGE_BATCH } from '../../src/db/batched-delete.ts';
import type { Queryable } from '../../src/db/database.ts';
import { SecurityEventsRepository } from '../../src/db/repositories/security-events.ts';
import { closeTestDatabases, type DatabaseKind, testDatabase } from '../helpers/database.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);
const skipPostgres = await skipUnless('postgres');

const BACKLOG = 100_000;
const CUTOFF_MS = Date.UTC(2026, 0, 1);
const INSERT_CHUNK = 10_000;

/** The database, with every DELETE statement's count of deleted rows noted as it answers. */
function countingDeletes(db: Queryable, deletes: number[]): Queryable {
  return {
    async query<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]> {
      const rows = await db.query<Row>(sql, params);
      if (/\bDELETE\b/.test(sql)) deletes.push(Number((rows[0] as { count?: unknown } | undefined)?.count));
      return rows;
    },
  };
}

/**
 * `count` lock-started events, one a second, ending `offsetMs` after the cutoff, written by SQL
 * 10,000 a statement: each row passes the per-account cap's trigger, and one statement of 100,000
 * could outlast the statement timeout on a loaded machine.
 */
async function insertEvents(db: Queryable, count: number, offsetMs: number): Promise<void> {
  for (let first = 1; first <= count; first += INSERT_CHUNK)
    await db.query(
      `INSERT INTO security_events (at, type, control, email, instance)
       SELECT to_timestamp(($1::float8 + $2::float8) / 1000.0) - i * interval '1 second',
              'lock-started', 'login-account', 'user' || i || '@example.com', 'test-1'
         FROM generate_series($3::int, $4::int) AS i`,
      [CUTOFF_MS, offsetMs, first, Math.min(count, first + INSERT_CHUNK - 1)],
    );
}

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`SecurityEventsRepository.deleteBefore (${kind})`, {
    skip: kind === 'postgres' && skipPostgres,
  }, () => {
    it(`purges a backlog of ${BACKLOG.toLocaleString('en')} expired events in batches of ${PURGE_BATCH}, keeping the recent ones`, async () => {
      const { db } = await testDatabase(kind);
      await db.query('DELETE FROM security_events');
      await insertEvents(db, BACKLOG, 0); // all older than the cutoff
      await insertEvents(db, 3, 10_000); // within the retention: at the cutoff and after it
      const deletes: number[] = [];
      const purged = await new SecurityEventsRepository(countingDeletes(db, deletes)).deleteBefore(CUTOFF_MS);
      assert.equal(purged, BACKLOG);
      assert.equal(deletes.length, Math.ceil((BACKLOG + 1) / PURGE_BATCH), 'one statement per batch');
      assert.ok(
        deletes.every((count) => count <= PURGE_BATCH),
        'no statement deletes more than a batch',
      );
      const left = await db.query<{ count: string | number }>(
        'SELECT count(*) AS count FROM security_events',
      );
      assert.equal(Number(left[0]!.count), 3);
    });

    it('stops after the batch that finds fewer than a batch, also when the backlog is a whole number of batches', async () => {
      const { db } = await testDatabase(kind);
      await db.query('DELETE FROM security_events');
      await insertEvents(db, 4, 0);
      const deletes: number[] = [];
      const repository = new SecurityEventsRepository(countingDeletes(db, deletes));
      assert.equal(await repository.deleteBefore(CUTOFF_MS, 2), 4);
      assert.deepEqual(deletes, [2, 2, 0]);
      assert.equal(await repository.deleteBefore(CUTOFF_MS, 2), 0);
    });

    it('purges the windows of the per-account cap in batches too, keeping the recent ones', async () => {
      const { db } = await testDatabase(kind);
      await db.query('DELETE FROM security_event_windows');
      // Events about 5 accounts before the cutoff and one after: a window each.
      await insertEvents(db, 5, -3_600_000);
      await insertEvents(db, 1, 3_600_000);
      const deletes: number[] = [];
      const repository = new SecurityEventsRepository(countingDeletes(db, deletes));
      assert.equal(await repository.deleteWindowsBefore(CUTOFF_MS, 2), 5);
      assert.deepEqual(deletes, [2, 2, 1]);
      const [left] = await db.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM security_event_windows',
      );
      assert.equal(left!.count, 1);
    });
  });
}
