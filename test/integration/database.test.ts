// The repositories, migrations and seed against the embedded database and a real PostgreSQL.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DatabaseUnavailableError } from '../../src/db/availability.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrate, statements } from '../../src/db/migrate.ts';
import { SessionsRepository } from '../../src/db/repositories/sessions.ts';
import { TasksRepository } from '../../src/db/repositories/tasks.ts';
import { UsersRepository } from '../../src/db/repositories/users.ts';
import { seedDemo } from '../../src/db/seed.ts';
import { TASK_STATUSES } from '../../src/domain.ts';
import {
  closeTestDatabases,
  type DatabaseKind,
  privateTestDatabase,
  type TestDatabase,
  testDatabase,
  testHash,
} from '../helpers/database.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const skipPostgres = await skipUnless('postgres');
const HOUR = 3_600_000;

const assignees = async (db: Database, ids: number[]) =>
  (
    await db.query<{ assignee_id: number | null }>(
      'SELECT assignee_id FROM tasks WHERE id = ANY($1::int[]) ORDER BY id',
      [ids],
    )
  ).map((row) => row.assignee_id);

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  const skip = kind === 'postgres' && skipPostgres;
  let database: TestDatabase;
  const shared = async () => {
    database = await testDatabase(kind);
    await database.reset();
  };

  describe(`TasksRepository (${kind})`, { skip }, () => {
    beforeEach(shared);

    it('lists by ascending id, filtered, from after an id, up to a limit', async () => {
      const tasks = new TasksRepository(database.db);
      assert.deepEqual(
        (await tasks.list({ limit: 3 })).map((task) => task.id),
        [1, 2, 3],
      );
      assert.deepEqual(
        (await tasks.list({ limit: 3, afterId: 198 })).map((task) => task.id),
        [199, 200],
      );
      const filtered = await tasks.list({ limit: 200, assigneeId: 2, clientId: 1, status: 'in_progress' });
      assert.ok(filtered.length > 0);
      for (const task of filtered)
        assert.deepEqual([task.assigneeId, task.clientId, task.status], [2, 1, 'in_progress']);
      assert.deepEqual(await tasks.list({ limit: 10, afterId: 200 }), []);
    });

    it('allows in the table exactly the statuses of TASK_STATUSES, and the seed uses each', async () => {
      // The schema's CHECK is the one copy of the list that SQL cannot import: this fails when they drift.
      const [check] = await database.db.query<{ definition: string }>(
        `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
          WHERE conrelid = 'tasks'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%status%'`,
      );
      assert.ok(check, 'tasks.status has a CHECK constraint');
      const allowed = [...check.definition.matchAll(/'([^']*)'::text/g)].map((match) => match[1]);
      assert.deepEqual(allowed.sort(), [...TASK_STATUSES].sort());
      const seeded = await database.db.query<{ status: string }>('SELECT DISTINCT status FROM tasks');
      assert.deepEqual(seeded.map((row) => row.status).sort(), [...TASK_STATUSES].sort());
    });

    it('finds one task with its fields, or null', async () => {
      const tasks = new TasksRepository(database.db);
      const task = await tasks.find(7);
      assert.ok(task);
      assert.equal(task.id, 7);
      assert.equal(task.assigneeId, null); // every seventh demo task starts unassigned
      assert.equal(typeof task.title, 'string');
      assert.equal(new Date(task.updatedAt).toISOString(), task.updatedAt);
      assert.equal(await tasks.find(201), null);
    });

    it('reassigns in one statement, reporting duplicates and missing tasks in input order', async () => {
      const tasks = new TasksRepository(database.db);
      const outcome = await tasks.bulkReassign([3, 500, 3, 6, 500], 1);
      assert.deepEqual(outcome, {
        kind: 'done',
        results: [
          { taskId: 3, outcome: 'reassigned' },
          { taskId: 500, outcome: 'NOT_FOUND' },
          { taskId: 3, outcome: 'DUPLICATE' },
          { taskId: 6, outcome: 'reassigned' },
          { taskId: 500, outcome: 'DUPLICATE' },
        ],
      });
      assert.deepEqual(await assignees(database.db, [3, 6]), [1, 1]);
    });

    it('counts a task already assigned to the target as reassigned', async () => {
      const tasks = new TasksRepository(database.db);
      const [current] = await assignees(database.db, [1]);
      const outcome = await tasks.bulkReassign([1], current!);
      assert.deepEqual(outcome, { kind: 'done', results: [{ taskId: 1, outcome: 'reassigned' }] });
    });

    it('changes nothing for an unknown assignee or one who is not an employee', async () => {
      const tasks = new TasksRepository(database.db);
      const before = await assignees(database.db, [1, 2, 3]);
      for (const assigneeId of [999, 4]) {
        assert.deepEqual(await tasks.bulkReassign([1, 2, 3], assigneeId), { kind: 'assignee-not-found' });
      }
      assert.deepEqual(await assignees(database.db, [1, 2, 3]), before);
    });
  });

  describe(`UsersRepository (${kind})`, { skip }, () => {
    beforeEach(shared);

    it('finds credentials by email whatever its case, and lists only employees', async () => {
      const users = new UsersRepository(database.db);
      const found = await users.findCredentials('BOB@example.com');
      assert.ok(found);
      assert.deepEqual(found.user, {
        id: 2,
        email: 'bob@example.com',
        name: 'Bob Nguyen',
        role: 'employee',
        mustChangePassword: false,
      });
      assert.match(found.passwordHash, /^\$argon2id\$/);
      assert.equal(await users.findCredentials('nobody@example.com'), null);
      const employees = await users.listEmployees();
      assert.deepEqual(employees.map((user) => user.id).sort(), [1, 2, 3]);
    });
  });

  describe(`SessionsRepository (${kind})`, { skip }, () => {
    const session = (idHash: string, userId: number, expiresAt: number, signedInAt: number) => ({
      idHash,
      userId,
      expiresAt,
      signedInAt,
      userAgent: null,
    });
    beforeEach(shared);

    it('creates, finds until expiry, and deletes sessions', async () => {
      const sessions = new SessionsRepository(database.db);
      const now = Date.UTC(2030, 0, 1);
      await sessions.create(session('hash-a', 1, now + HOUR, now - 5));
      await sessions.create(session('hash-b', 4, now + 2 * HOUR, now));
      const found = await sessions.find('hash-a', new Date(now));
      assert.ok(found && /^[0-9a-f-]{36}$/.test(found.publicId), 'a public id of its own');
      assert.deepEqual(found, {
        user: {
          id: 1,
          email: 'alice@example.com',
          name: 'Alice Martin',
          role: 'employee',
          mustChangePassword: false,
        },
        expiresAt: now + HOUR,
        signedInAt: now - 5,
        publicId: found.publicId,
        lastSeenAt: now - 5,
      });
      assert.equal(await sessions.find('hash-a', new Date(now + HOUR)), null, 'expired at expiresAt');
      assert.equal(await sessions.find('unknown', new Date(now)), null);
      await sessions.delete('hash-a');
      assert.equal(await sessions.find('hash-a', new Date(now)), null);
      assert.equal((await sessions.find('hash-b', new Date(now)))?.user.role, 'admin');
    });

    it('deletes expired sessions only', async () => {
      const sessions = new SessionsRepository(database.db);
      const now = Date.UTC(2030, 0, 1);
      await sessions.create(session('old', 1, now - 1, now - HOUR));
      await sessions.create(session('new', 1, now + HOUR, now));
      assert.equal(await sessions.deleteExpired(new Date(now)), 1);
      assert.ok(await sessions.find('new', new Date(now)));
    });
  });

  describe(`migrations and seed (${kind})`, { skip }, () => {
    it('skips the seed when the database is not empty', async () => {
      const { db } = await testDatabase(kind);
      assert.equal(await seedDemo(db, testHash), false);
      const [row] = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM users');
      assert.equal(row!.count, 4);
    });

    it('applies each migration once when run twice', async () => {
      const fresh = await privateTestDatabase(kind, { prepared: false });
      try {
        assert.deepEqual(await migrate(fresh.db), await migrationFiles());
        assert.deepEqual(await migrate(fresh.db), []);
      } finally {
        await fresh.close();
      }
    });

    it('gives tasks that existed before 015 its defaults, and keeps client names that collide apart', async () => {
      const fresh = await privateTestDatabase(kind, { prepared: false });
      try {
        const { db } = fresh;
        // The schema as it was before 015, with data nothing stopped then.
        await db.query(
          'CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
        );
        for (const file of (await migrationFiles()).filter((name) => name < '015')) {
          const sql = await readFile(new URL(`../../src/db/migrations/${file}`, import.meta.url), 'utf8');
          for (const statement of statements(sql)) await db.query(statement);
          await db.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
        }
        await db.query("INSERT INTO clients (id, name) VALUES (1, 'Acme'), (2, 'ACME'), (3, 'Initech')");
        await db.query(
          "INSERT INTO tasks (id, client_id, title, status, updated_at) VALUES (1, 2, 'Old', 'done', '2025-01-02T03:04:05Z')",
        );
        assert.deepEqual(await migrate(db), [
          '015_task_fields.sql',
          '016_task_search.sql',
          '017_task_words.sql',
          '018_idempotency_key_route.sql',
        ]);
        const task = await new TasksRepository(db).find(1);
        assert.deepEqual(task, {
          id: 1,
          clientId: 2,
          title: 'Old',
          description: '',
          status: 'done',
          priority: 'normal',
          dueDate: null,
          assigneeId: null,
          createdAt: '2025-01-02T03:04:05.000Z',
          createdBy: null,
          updatedAt: '2025-01-02T03:04:05.000Z',
          version: 1,
        });
        assert.deepEqual(await db.query('SELECT id, name FROM clients ORDER BY id'), [
          { id: 1, name: 'Acme' },
          { id: 2, name: 'ACME (2)' },
          { id: 3, name: 'Initech' },
        ]);
        await assert.rejects(
          db.query("INSERT INTO clients (id, name) VALUES (4, 'initech')"),
          /clients_name_key/,
        );
        assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM task_history'), [{ n: 0 }]);
        // 017 gives the tasks that were there their words, which a search by words reads.
        assert.deepEqual(await db.query("SELECT id FROM tasks WHERE words @@ 'ol:*'::tsquery"), [{ id: 1 }]);
      } finally {
        await fresh.close();
      }
    });

    it('migrates and seeds once when two connections start at the same time', async () => {
      const fresh = await privateTestDatabase(kind, { prepared: false });
      // PGlite is one connection, so two callers share it; PostgreSQL gets a second pool.
      const second = fresh.url ? await openDatabase({ databaseUrl: fresh.url, dataDir: '' }) : fresh.db;
      try {
        const seeded: boolean[] = [];
        const seed = async (connection: Parameters<typeof seedDemo>[0]) => {
          seeded.push(await seedDemo(connection, testHash));
        };
        const applied = await Promise.all([migrate(fresh.db, seed), migrate(second, seed)]);
        assert.deepEqual(applied.flat(), await migrationFiles());
        assert.deepEqual(seeded.sort(), [false, true]);
        const [users] = await fresh.db.query<{ count: number }>('SELECT count(*)::int AS count FROM users');
        const [tasks] = await fresh.db.query<{ count: number }>('SELECT count(*)::int AS count FROM tasks');
        assert.deepEqual([users!.count, tasks!.count], [4, 200]);
      } finally {
        if (second !== fresh.db) await second.close();
        await fresh.close();
      }
    });
  });
}

describe('a migration longer than DATABASE_STATEMENT_TIMEOUT (PostgreSQL)', { skip: skipPostgres }, () => {
  it('runs to its end, while the service’s own statements keep their deadline', async () => {
    const fresh = await privateTestDatabase('postgres', { prepared: false });
    const directory = await mkdtemp(path.join(os.tmpdir(), 'tp-migrations-'));
    // What a migration of a large table is, in time: 017 took about 100 s on a million tasks.
    await writeFile(path.join(directory, '001_slow.sql'), 'SELECT pg_sleep(0.6);\n');
    const db = await openDatabase({ databaseUrl: fresh.url!, dataDir: '', databaseStatementTimeoutMs: 200 });
    try {
      assert.deepEqual(await migrate(db, undefined, pathToFileURL(`${directory}/`)), ['001_slow.sql']);
      const [row] = await db.query<{ name: string }>('SELECT name FROM schema_migrations');
      assert.equal(row?.name, '001_slow.sql');
      await assert.rejects(db.query('SELECT pg_sleep(0.6)'), DatabaseUnavailableError);
    } finally {
      await db.close();
      await fresh.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('a migration split into statements', () => {
  it('splits where a line ends with a semicolon, never inside a $$-quoted function body', () => {
    const sql = [
      'CREATE TABLE t (a int);',
      'CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$',
      'BEGIN',
      '  NEW.a := 1;',
      '  RETURN NEW;',
      'END',
      '$$;',
      'CREATE TRIGGER f BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION f() ;  ',
      'INSERT INTO t VALUES (1); -- not the end: the line goes on',
      'SELECT 1;',
    ].join('\n');
    assert.deepEqual(statements(sql), [
      'CREATE TABLE t (a int)',
      'CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  NEW.a := 1;\n  RETURN NEW;\nEND\n$$',
      'CREATE TRIGGER f BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()',
      'INSERT INTO t VALUES (1); -- not the end: the line goes on\nSELECT 1',
    ]);
  });
});

/** Every migration file, in the order migrate() applies them. */
async function migrationFiles(): Promise<string[]> {
  const files = await readdir(new URL('../../src/db/migrations/', import.meta.url));
  return files.filter((file) => file.endsWith('.sql')).sort();
}
