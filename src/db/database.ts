// One SQL dialect, two drivers: the embedded PGlite by default, a PostgreSQL server through `pg`.
import { existsSync } from 'node:fs';
import { cp, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { Availability, DatabaseUnavailableError, isStatementTimeout, isUnavailable } from './availability.ts';
import { LOCK_SOCKET, lockDataDir, makeDataDir } from './data-dir-lock.ts';

/** Where `npm run build` leaves an initialised data directory (src/db/pglite-template.ts). */
export const PGLITE_TEMPLATE_DIR = fileURLToPath(new URL('../../dist/pglite-template', import.meta.url));

/** Something that runs SQL: the database itself or one connection inside a transaction. */
export interface Queryable {
  query<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

export interface Database extends Queryable {
  readonly kind: 'embedded' | 'postgres';
  /**
   * Whether the database can be reached, as its queries show: an outage starts with a query that
   * failed with DatabaseUnavailableError and ends with the next that succeeds. The embedded
   * database lives in the process and is never away.
   */
  readonly availability: Availability;
  /** Runs `work` on one dedicated connection (for session-level advisory locks). */
  withConnection<T>(work: (connection: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs `work` on a connection of its own with no deadline on its statements: a migration over a
   * table of a million rows takes minutes, far past DATABASE_STATEMENT_TIMEOUT (docs/operations.md).
   */
  withSchemaConnection<T>(work: (connection: Queryable) => Promise<T>): Promise<T>;
  /**
   * Hears what any process announces on `channel` (`pg_notify`, delivered at commit) for as long as
   * it listens, and tells `listener.state` whether it hears them: a PostgreSQL server has a
   * connection of its own for it, opened again whenever it breaks; what was announced while it was
   * broken is lost, which `state(false)` says. The embedded database belongs to one process (its
   * directory is locked), so everything announced comes from that process: it reports `state(true)`
   * and nothing else. Resolves once the first try to listen has ended, heard or not.
   */
  listen(channel: string, listener: ChannelListener): Promise<{ close(): Promise<void> }>;
  /**
   * Runs `work` inside BEGIN … COMMIT on a connection of its own; any throw rolls back. On the
   * embedded database, whose one session every query shares, no other query runs until it ends
   * (PGlite's own `transaction`), so nothing of another request lands inside it.
   */
  transaction<T>(work: (connection: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface ChannelListener {
  message(payload: string): void;
  /** True once listening, false when the listening connection broke (announcements may be lost until true again). */
  state(listening: boolean): void;
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

/** `rows` as one array per column, in the order of `keys`: the parameters of `SELECT … FROM unnest($1, $2, …)`. */
export function columnsOf<Row, Key extends keyof Row>(
  rows: readonly Row[],
  keys: readonly Key[],
): Row[Key][][] {
  return keys.map((key) => rows.map((row) => row[key]));
}

export interface DatabaseOptions {
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** PostgreSQL only: how long a statement may run before it is cancelled (default 5 s). */
  readonly databaseStatementTimeoutMs?: number;
  /** An already opened PGlite (tests clone one initialised template instead of booting a new one). */
  readonly pglite?: PGlite;
  /** Whether an empty dataDir starts from the build's template (default true). */
  readonly template?: boolean;
  /** PostgreSQL only: how often the listening connection is asked whether it still answers (default 10 s). */
  readonly listenProbeMs?: number;
}

/** `pg`, loaded only for a PostgreSQL server: the embedded database never holds it (BENCHMARKS.md). */
let Pg: typeof pg;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    Pg ??= (await import('pg')).default;
    return openPostgres(
      options.databaseUrl,
      options.databaseStatementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      options.listenProbeMs ?? LISTEN_PROBE_MS,
    );
  }
  if (options.pglite) return wrapPglite(options.pglite);
  await makeDataDir(options.dataDir);
  const lock = await lockDataDir(options.dataDir);
  try {
    if (options.template !== false) await seedDataDirFromTemplate(options.dataDir);
    const db = new PGlite(options.dataDir, pgliteOptions());
    await db.waitReady;
    return wrapPglite(db, lock.release);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** Whether `dataDir` holds an embedded database already (a server has started on it), without touching it. */
export function holdsEmbeddedDatabase(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'PG_VERSION'));
}

/**
 * PGlite's start parameters plus a small memory footprint: PostgreSQL's defaults size shared
 * buffers for a server of its own (128 MB, all touched at start), where the embedded database of
 * one process serves a few hundred rows. These keep the process's memory a fraction of what the
 * defaults take; 2 MB of shared buffers hold the pages it serves (measured: BENCHMARKS.md).
 */
export function pgliteOptions(): { startParams: string[] } {
  return {
    startParams: [
      ...PGlite.defaultStartParams,
      ...[
        '-c',
        'shared_buffers=2MB',
        '-c',
        'work_mem=2MB',
        '-c',
        'temp_buffers=1MB',
        '-c',
        'wal_buffers=256kB',
      ],
    ],
  };
}

/** Inside DATA_DIR while the template is being copied in; its presence marks an unfinished copy. */
const PARTIAL = '.template-copy';

/**
 * An empty DATA_DIR gets a copy of the data directory `npm run build` initialised (and migrated),
 * so the first start skips initdb: a few hundred milliseconds instead of seconds, and none of
 * initdb's memory. The copy is staged inside DATA_DIR itself (which may be a mount point that can
 * be neither removed nor renamed onto), then moved up entry by entry, PG_VERSION last: a start
 * that finds the stage without PG_VERSION knows an earlier copy was cut short and starts over.
 * Without a template (no build yet) PGlite runs initdb itself, as before.
 */
async function seedDataDirFromTemplate(dataDir: string): Promise<void> {
  if (holdsEmbeddedDatabase(dataDir)) return;
  if (!existsSync(path.join(PGLITE_TEMPLATE_DIR, 'PG_VERSION'))) return;
  const stage = path.join(dataDir, PARTIAL);
  const present = (await readdir(dataDir)).filter((entry) => entry !== LOCK_SOCKET);
  if (present.length > 0 && !present.includes(PARTIAL)) return; // someone else's files: not ours to fill
  // An unfinished copy: what was moved up came from the template, so it can all go.
  for (const entry of present) await rm(path.join(dataDir, entry), { recursive: true, force: true });
  await cp(PGLITE_TEMPLATE_DIR, stage, { recursive: true });
  const entries = (await readdir(stage)).sort(
    (a, b) => Number(a === 'PG_VERSION') - Number(b === 'PG_VERSION'),
  );
  for (const entry of entries) await rename(path.join(stage, entry), path.join(dataDir, entry));
  await rm(stage, { recursive: true, force: true });
}

function wrapPglite(db: PGlite, release: () => Promise<void> = async () => {}): Database {
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
    availability: new Availability(),
    query,
    withConnection,
    withSchemaConnection: withConnection,
    async listen(_channel, listener) {
      listener.state(true);
      return { close: async () => {} };
    },
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: async <Row>(sql: string, params: readonly unknown[] = []) =>
            (await tx.query<Row>(sql, params as unknown[])).rows,
        }),
      ),
    async close() {
      await db.close();
      await release();
    },
  };
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;
/** The client's own deadline comes this long after the server's, which normally answers first (57014). */
const CLIENT_TIMEOUT_MARGIN_MS = 1000;

/**
 * A pool that rides through a server restart: a connection that breaks is dropped (never handed
 * out again), the next query opens a new one, and an error on an idle connection is absorbed.
 * Every failure that means "away" is rethrown as DatabaseUnavailableError and, unless it is a
 * statement past its timeout on a connection that still works, moves `availability`.
 */
function openPostgres(url: string, statementTimeoutMs: number, listenProbeMs: number): Database {
  const pool = new Pg.Pool({
    connectionString: url,
    max: 10,
    // Waiting for a connection (a server that does not answer, or a pool all busy) counts against
    // the same deadline as a statement.
    connectionTimeoutMillis: statementTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // The server cancels a statement past its deadline; the client gives up a little later on a
    // server that does not answer at all (a frozen host, a dropped route).
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
  });
  const availability = new Availability();
  // When each connection was made: one made before the database came back proves nothing by failing.
  const connectedAt = new WeakMap<pg.PoolClient, number>();
  pool.on('connect', (client) => connectedAt.set(client, availability.since));
  // An idle client whose server went away (a restart ends every session) errors here, outside any
  // query: the pool has already removed it; without a listener the process would crash.
  pool.on('error', (error, client) => {
    if (isUnavailable(error)) availability.failed(error, connectedAt.get(client));
  });
  /** Runs `work`; `connection` names the connection it ran on (its result's, for a connect). */
  const guarded = async <T>(
    work: () => Promise<T>,
    connection: (result: T) => pg.PoolClient | undefined = () => undefined,
  ): Promise<T> => {
    const since = availability.since;
    let result: T;
    try {
      result = await work();
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      // A slow statement is answered 503 like an outage, but only failing connections make one.
      if (!isStatementTimeout(error)) availability.failed(error, since);
      throw new DatabaseUnavailableError(error);
    }
    const client = connection(result);
    availability.succeeded(since, client ? connectedAt.get(client) : since);
    // An older connection answered while only a new one may end the outage: ask a new one now,
    // rather than wait for the pool to need one (it may have enough old ones for a long time).
    if (availability.awaitsNewConnection) void probe();
    return result;
  };
  let probing = false;
  let closed = false;
  /** Opens fresh connections until one answers (the outage ends) or the pool closes. */
  const probe = async () => {
    if (probing) return;
    probing = true;
    try {
      while (availability.awaitsNewConnection && !closed) {
        const since = availability.since;
        const fresh = new Pg.Client({ connectionString: url, connectionTimeoutMillis: statementTimeoutMs });
        fresh.on('error', () => {});
        try {
          await fresh.connect();
          await fresh.query('SELECT 1');
          availability.succeeded(since, since);
        } catch {
          // Still away: the next try, or a pooled query, will tell.
        } finally {
          await fresh.end().catch(() => {});
        }
        if (availability.awaitsNewConnection && !closed)
          await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS).unref());
      }
    } finally {
      probing = false;
    }
  };
  const run =
    (client: pg.PoolClient): Queryable['query'] =>
    (sql, params = []) =>
      guarded(
        async () => (await client.query(sql, params as unknown[])).rows,
        () => client,
      );
  const withConnection = async <T>(work: (connection: Queryable) => Promise<T>): Promise<T> => {
    const client = await guarded(
      () => pool.connect(),
      (connected) => connected,
    );
    let broken = false;
    // A checked-out client is ours alone: the pool stops listening to its errors, and one that
    // comes between two statements (a server shutting down ends every session) would otherwise be
    // an 'error' event nobody handles, which ends the process. The next statement then fails.
    const onError = (error: Error) => {
      broken = true;
      if (isUnavailable(error)) availability.failed(error, connectedAt.get(client));
    };
    client.on('error', onError);
    try {
      return await work({ query: run(client) });
    } catch (error) {
      broken ||= error instanceof DatabaseUnavailableError && !isStatementTimeout(error.cause);
      throw error;
    } finally {
      client.removeListener('error', onError);
      // A connection that broke (or still runs a statement the client gave up on) is destroyed.
      client.release(broken);
    }
  };
  return {
    kind: 'postgres',
    availability,
    // On a connection of its own, so that its success says which connection answered.
    query: (sql, params) => withConnection((connection) => connection.query(sql, params)),
    withConnection,
    async withSchemaConnection(work) {
      // Not from the pool, whose connections carry the statement deadline on both ends.
      const client = new Pg.Client({ connectionString: url, connectionTimeoutMillis: statementTimeoutMs });
      client.on('error', () => {}); // a broken connection fails the statement under way
      await guarded(() => client.connect());
      try {
        await client.query('SET statement_timeout = 0');
        return await work({
          query: async (sql, params = []) => (await client.query(sql, params as unknown[])).rows,
        });
      } finally {
        await client.end().catch(() => {});
      }
    },
    listen: (channel, listener) => listenOn(url, statementTimeoutMs, listenProbeMs, channel, listener),
    transaction: (work) => withConnection((connection) => inTransaction(connection, () => work(connection))),
    close: () => {
      closed = true;
      return pool.end();
    },
  };
}

/** How often a fresh connection is tried while an older one answering cannot end an outage. */
const PROBE_INTERVAL_MS = 250;

/** How long a broken listening connection waits before it is opened again. */
const LISTEN_RETRY_MS = 1000;

/**
 * How often the listening connection is asked to answer. It only ever receives, so a connection
 * that died silently (a host gone, a route dropped: no reset ever arrives) would otherwise look
 * alive for the operating system's keep-alive, two hours by default, while the announcements
 * that end cached sessions go nowhere. A probe that fails or does not answer within the statement
 * timeout ends it: the sessions cache stops trusting itself, and the connection is opened again.
 */
const LISTEN_PROBE_MS = 10_000;

/**
 * LISTEN on a connection of its own (a pooled one would be handed to queries), probed every
 * `probeMs`, opened again LISTEN_RETRY_MS after it breaks, stops answering or fails to open, on
 * unref'd timers, until closed.
 */
async function listenOn(
  url: string,
  timeoutMs: number,
  probeMs: number,
  channel: string,
  listener: ChannelListener,
): Promise<{ close(): Promise<void> }> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  let closed = false;
  /** The connection is done with: no longer ours, announced as not listening, opened again. */
  const lost = (connection: pg.Client) => {
    if (client !== connection) return;
    client = null;
    listener.state(false);
    again();
  };
  const again = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      void open();
    }, LISTEN_RETRY_MS);
    retry.unref();
  };
  const open = async (): Promise<void> => {
    const connection = new Pg.Client({
      connectionString: url,
      keepAlive: true,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
    });
    connection.on('notification', (note) => {
      if (note.channel === channel) listener.message(note.payload ?? '');
    });
    // An error is followed by 'end'; without a listener it would crash the process.
    connection.on('error', () => {});
    connection.on('end', () => lost(connection));
    try {
      await connection.connect();
      await connection.query(`LISTEN ${channel}`);
    } catch {
      connection.end().catch(() => {});
      again();
      return;
    }
    if (closed) {
      await connection.end().catch(() => {});
      return;
    }
    client = connection;
    listener.state(true);
    const probe = () => {
      if (client !== connection) return;
      connection.query('SELECT 1').then(
        () => setTimeout(probe, probeMs).unref(),
        () => {
          lost(connection);
          // It may never answer again: its socket goes without waiting for a goodbye.
          (
            connection as unknown as { connection?: { stream?: { destroy(): void } } }
          ).connection?.stream?.destroy();
        },
      );
    };
    setTimeout(probe, probeMs).unref();
  };
  listener.state(false);
  await open();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const connection = client;
      client = null;
      await connection?.end().catch(() => {});
    },
  };
}
