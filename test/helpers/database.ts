// Test databases: one embedded PGlite per test file, or a private schema on a real PostgreSQL.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { findPackageJSON } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { hashPassword } from '../../src/auth/passwords.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { DEMO_ACCOUNTS, DEMO_CLIENTS, DEMO_PASSWORD, resetDemoTasks, seedDemo } from '../../src/db/seed.ts';
import { POSTGRES_URL } from './services.ts';

export type DatabaseKind = 'embedded' | 'postgres';
export const TEST_PASSWORD_HASH_COST = 64;
/** The demo accounts' hashes at the tests' cheap cost. */
export const testHash = (password: string) => hashPassword(password, TEST_PASSWORD_HASH_COST);

export interface TestDatabase {
  readonly kind: DatabaseKind;
  readonly db: Database;
  /** The URL that opens this very database (postgres only). */
  readonly url: string | null;
  /** Puts the demo data back as seeded (accounts, passwords, tasks) and drops every session and device. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

const shared = new Map<DatabaseKind, Promise<TestDatabase>>();

/** The database of this test file for `kind`, migrated and seeded once, shared by its tests. */
export function testDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  let database = shared.get(kind);
  if (!database) {
    database = privateTestDatabase(kind);
    shared.set(kind, database);
  }
  return database;
}

/** Closes what testDatabase opened; call from an `after` hook. */
export async function closeTestDatabases(): Promise<void> {
  for (const database of shared.values()) await (await database).close();
  shared.clear();
}

/**
 * A database of its own, not shared with the file's other tests (one a test may close or migrate
 * from scratch); `prepared: false` leaves it empty, without even the migrations. Close it yourself.
 */
export function privateTestDatabase(kind: DatabaseKind, { prepared = true } = {}): Promise<TestDatabase> {
  return kind === 'embedded' ? openEmbedded(prepared) : openPostgresSchema(prepared);
}

async function prepare(db: Database): Promise<void> {
  await migrate(db, async (connection) => {
    await seedDemo(connection, testHash);
  });
}

let demoHash: Promise<string> | undefined;

const resetter = (db: Database) => async () => {
  await db.query('DELETE FROM sessions');
  await db.query('DELETE FROM passkeys');
  await db.query('DELETE FROM known_devices');
  await resetDemoTasks(db);
  // A test may have added or renamed clients (through a name no one has, so two may swap theirs).
  await db.query('DELETE FROM clients WHERE id > $1', [DEMO_CLIENTS.length]);
  await db.query("UPDATE clients SET name = 'reset ' || id");
  await db.query(
    'UPDATE clients SET name = demo.name FROM unnest($1::text[]) WITH ORDINALITY AS demo (name, id) WHERE clients.id = demo.id',
    [DEMO_CLIENTS],
  );
  // A test may have added people, changed a password, a name or a role, or disabled an account.
  await db.query('DELETE FROM users WHERE id > $1', [DEMO_ACCOUNTS.length]);
  demoHash ??= testHash(DEMO_PASSWORD);
  await db.query(
    `UPDATE users SET name = demo.name, role = demo.role, password_hash = $3, disabled_at = NULL,
       must_change_password = false, password_expires_at = NULL, last_sign_in_at = NULL
     FROM unnest($1::text[], $2::text[], $4::text[]) AS demo (email, name, role)
     WHERE users.email = demo.email`,
    [
      DEMO_ACCOUNTS.map((a) => a.email),
      DEMO_ACCOUNTS.map((a) => a.name),
      await demoHash,
      DEMO_ACCOUNTS.map((a) => a.role),
    ],
  );
};

async function openEmbedded(prepared = true): Promise<TestDatabase> {
  const pglite = prepared ? await preparedPglite() : await bootPglite();
  const db = await openDatabase({ databaseUrl: null, dataDir: '', pglite });
  // On the image migrate() finds nothing pending and nothing to seed, as a start on an existing database.
  if (prepared) await prepare(db);
  return { kind: 'embedded', db, url: null, reset: resetter(db), close: () => pglite.close() };
}

async function bootPglite(loadDataDir?: Blob): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = new PGlite(loadDataDir && { loadDataDir });
  await pglite.waitReady;
  return pglite;
}

const MIGRATE = fileURLToPath(new URL('../../src/db/migrate.ts', import.meta.url));
const SEED = fileURLToPath(new URL('../../src/db/seed.ts', import.meta.url));
const MIGRATIONS = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));
const IMAGES = fileURLToPath(new URL('../../node_modules/.cache/test-databases/', import.meta.url));

/**
 * An in-memory PGlite migrated and seeded as a test file's database starts. Each test file used to
 * run initdb, the migrations and the seed itself (seconds of CPU, times every file); the first file
 * after a change of the migrations, the seed or PGlite saves the result as an image, which later
 * files load in a fraction of that. The image is named after what made it, so a stale one is never
 * loaded.
 */
async function preparedPglite(): Promise<PGlite> {
  const image = join(IMAGES, `prepared-${await imageKey()}.tar`);
  if (existsSync(image)) return bootPglite(new Blob([await readFile(image)]));
  const pglite = await bootPglite();
  await prepare(await openDatabase({ databaseUrl: null, dataDir: '', pglite }));
  const dump = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer());
  // Written beside and renamed into place: files starting at once never read half an image.
  await mkdir(IMAGES, { recursive: true });
  const partial = `${image}.${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(partial, dump);
  await rename(partial, image);
  for (const old of await readdir(IMAGES))
    if (old.endsWith('.tar') && join(IMAGES, old) !== image) await rm(join(IMAGES, old), { force: true });
  return pglite;
}

async function imageKey(): Promise<string> {
  const hash = createHash('sha256');
  const pgliteManifest = findPackageJSON('@electric-sql/pglite', import.meta.url);
  hash.update(JSON.parse(await readFile(pgliteManifest!, 'utf8')).version);
  hash
    .update(await readFile(MIGRATE))
    .update(await readFile(SEED))
    .update(`${TEST_PASSWORD_HASH_COST}`);
  for (const file of (await readdir(MIGRATIONS)).sort())
    hash.update(`\0${file}\0`).update(await readFile(join(MIGRATIONS, file)));
  return hash.digest('hex').slice(0, 16);
}

/** A fresh schema in the server's `test` database, dropped again at close. */
async function openPostgresSchema(prepared = true): Promise<TestDatabase> {
  const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = withSearchPath(POSTGRES_URL, schema);
  const db = await openDatabase({ databaseUrl: url, dataDir: '' });
  if (prepared) await prepare(db);
  return {
    kind: 'postgres',
    db,
    url,
    reset: resetter(db),
    async close() {
      await db.close();
      const cleanup = new pg.Client({ connectionString: POSTGRES_URL });
      await cleanup.connect();
      await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      await cleanup.end();
    },
  };
}

function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

/** What `recordWrites` saw: one entry per row written, `table:OPERATION`. */
export interface WriteRecorder {
  writes(): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * Records every row written to the database's tables from now on (a trigger per table, into a
 * table of its own), so that a test can say "this wrote nothing" on PGlite and PostgreSQL alike
 * without reading server-wide counters other tests move too. A row written and deleted again
 * leaves two entries. `stop` removes the triggers.
 */
export async function recordWrites(db: Database): Promise<WriteRecorder> {
  const tables = (
    await db.query<{ name: string }>(
      'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename',
    )
  ).map((row) => row.name);
  await db.query('CREATE TABLE test_writes (id serial PRIMARY KEY, what text NOT NULL)');
  await db.query(`CREATE FUNCTION test_note_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO test_writes (what) VALUES (TG_TABLE_NAME || ':' || TG_OP); RETURN NULL; END $$`);
  for (const table of tables)
    await db.query(
      `CREATE TRIGGER test_note_write AFTER INSERT OR UPDATE OR DELETE ON ${table}
         FOR EACH ROW EXECUTE FUNCTION test_note_write()`,
    );
  return {
    writes: async () =>
      (await db.query<{ what: string }>('SELECT what FROM test_writes ORDER BY id')).map((row) => row.what),
    async stop() {
      for (const table of tables) await db.query(`DROP TRIGGER test_note_write ON ${table}`);
      await db.query('DROP FUNCTION test_note_write()');
      await db.query('DROP TABLE test_writes');
    },
  };
}
