// One SQL dialect, two drivers: the embedded PGlite by default, a PostgreSQL server through `pg`.
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** Something that runs SQL: the database itself or one connection inside a transaction. */
export interface Queryable {
  query<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

export interface Database extends Queryable {
  readonly kind: 'embedded' | 'postgres';
  /** Runs `work` on one dedicated connection (for session-level advisory locks). */
  withConnection<T>(work: (connection: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Runs `work` inside BEGIN … COMMIT on a connection that is already the caller's alone (from
 * withConnection); any throw rolls back. Single statements need none: they are atomic already.
 */
export async function inTransaction<T>(connection: Queryable, work: () => Promise<T>): Promise<T> {
  await connection.query('BEGIN');
  try {
    const result = await work();
    await connection.query('COMMIT');
    return result;
  } catch (error) {
    await connection.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

export interface DatabaseOptions {
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** An already opened PGlite (tests clone one initialised template instead of booting a new one). */
  readonly pglite?: PGlite;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl);
  if (options.pglite) return wrapPglite(options.pglite);
  await mkdir(options.dataDir, { recursive: true });
  const db = new PGlite(options.dataDir);
  await db.waitReady;
  return wrapPglite(db);
}

function wrapPglite(db: PGlite): Database {
  const query = async <Row>(sql: string, params: readonly unknown[] = []) =>
    (await db.query<Row>(sql, params as unknown[])).rows;
  // PGlite is one session, where advisory locks are re-entrant: two callers of withConnection would
  // both "hold" the schema lock and run migrations side by side. Queue them instead.
  let connectionQueue: Promise<unknown> = Promise.resolve();
  const withConnection = <T>(work: (connection: Queryable) => Promise<T>): Promise<T> => {
    const turn = connectionQueue.then(() => work({ query }));
    connectionQueue = turn.catch(() => {});
    return turn;
  };
  return {
    kind: 'embedded',
    query,
    withConnection,
    close: () => db.close(),
  };
}

function openPostgres(url: string): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const run =
    (client: pg.Pool | pg.PoolClient): Queryable['query'] =>
    async (sql, params = []) =>
      (await client.query(sql, params as unknown[])).rows;
  const withConnection = async <T>(work: (connection: Queryable) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      return await work({ query: run(client) });
    } finally {
      client.release();
    }
  };
  return {
    kind: 'postgres',
    query: run(pool),
    withConnection,
    close: () => pool.end(),
  };
}
