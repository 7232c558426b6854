// Applies the SQL files of migrations/ in name order, once, under an advisory lock.
import { readdir, readFile } from 'node:fs/promises';
import { type Database, inTransaction, type Queryable } from './database.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
/** Any fixed 64-bit number; instances starting at once queue on it. */
export const SCHEMA_LOCK_ID = 727_001;

/**
 * Runs pending migrations and then `afterMigrate` (the demo seed) while holding the schema lock,
 * so that several instances starting at the same time neither race nor seed twice.
 */
export async function migrate(
  db: Database,
  afterMigrate: (connection: Queryable) => Promise<void> = async () => {},
  directory: URL = MIGRATIONS_DIR,
): Promise<string[]> {
  const files = (await readdir(directory)).filter((f) => f.endsWith('.sql')).sort();
  // No statement deadline: a migration of a large table runs as long as it needs (docs/operations.md).
  return db.withSchemaConnection(async (connection) => {
    // Polled, not waited on: one instance's wait would hold a statement open while another migrates
    // and seeds.
    while (!(await tryLock(connection))) await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    try {
      await connection.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const done = new Set(
        (await connection.query<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name),
      );
      const applied: string[] = [];
      for (const file of files.filter((f) => !done.has(f))) {
        const sql = await readFile(new URL(file, directory), 'utf8');
        await inTransaction(connection, async () => {
          await exec(connection, sql);
          await connection.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
        });
        applied.push(file);
      }
      await afterMigrate(connection);
      return applied;
    } finally {
      await connection.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK_ID]);
    }
  });
}

/** Whether migrations have ever run on `db` (a server has started on it): its bookkeeping table exists. */
export async function hasBeenMigrated(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ name: string | null }>(
    "SELECT to_regclass('schema_migrations')::text AS name",
  );
  return row?.name != null;
}

const LOCK_POLL_MS = 100;

async function tryLock(connection: Queryable): Promise<boolean> {
  const [row] = await connection.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
    SCHEMA_LOCK_ID,
  ]);
  return row?.locked === true;
}

/** Runs a file of several statements (no parameters, so the simple protocol accepts them all). */
async function exec(connection: Queryable, sql: string): Promise<void> {
  for (const statement of statements(sql)) await connection.query(statement);
}

/**
 * The statements of a migration: split where a line ends with `;`, except inside a `$$`-quoted
 * body (a function's), whose own statements end lines too.
 */
export function statements(sql: string): string[] {
  const found: string[] = [];
  let current = '';
  sql.split('$$').forEach((part, index) => {
    if (index % 2 === 1) {
      current += `$$${part}$$`;
      return;
    }
    const pieces = part.split(/;\s*$/m);
    current += pieces[0];
    for (const piece of pieces.slice(1)) {
      found.push(current);
      current = piece;
    }
  });
  found.push(current);
  return found.map((s) => s.trim()).filter(Boolean);
}
