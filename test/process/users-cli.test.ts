// Accounts as processes (docs/rules.md#accounts): the command line on both databases, production.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { verifyPassword } from '../../src/auth/passwords.ts';
import { openDatabase, type Queryable } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { privateTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { fetch, listeningUrl, startServer } from '../helpers/server-process.ts';
import { skipUnless } from '../helpers/services.ts';

const CLI = fileURLToPath(new URL('../../src/cli/users.ts', import.meta.url));
const skipPostgres = await skipUnless('postgres');
const cleanups: (() => Promise<void>)[] = [];
after(() => Promise.all(cleanups.map((cleanup) => cleanup())));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node src/cli/users.ts …args` with `input` on standard input (none: an empty one). */
function users(env: Record<string, string>, args: readonly string[], input = ''): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, NODE_ENV: 'production', PASSWORD_HASH_COST: '64', SESSION_SECRET: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdin.end(input);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Where the command line works: its environment, and the database read directly between runs. */
interface Target {
  readonly env: Record<string, string>;
  /** Reads the database; the embedded one is opened for the call only (one process at a time). */
  read<T>(work: (db: Queryable) => Promise<T>): Promise<T>;
}

/**
 * A database as a server leaves it on its first start: created and migrated, no accounts. The
 * command line never creates one itself (`serverStarted: false` is the other case).
 */
async function target(kind: 'embedded' | 'postgres', { serverStarted = true } = {}): Promise<Target> {
  if (kind === 'postgres') {
    const database: TestDatabase = await privateTestDatabase('postgres', { prepared: false });
    cleanups.push(() => database.close());
    if (serverStarted) await migrate(database.db);
    return { env: { DATABASE_URL: database.url! }, read: (work) => work(database.db) };
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'tp-users-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  if (serverStarted) {
    const db = await openDatabase({ databaseUrl: null, dataDir });
    await migrate(db);
    await db.close();
  }
  return {
    env: { DATA_DIR: dataDir },
    async read(work) {
      const db = await openDatabase({ databaseUrl: null, dataDir });
      try {
        return await work(db);
      } finally {
        await db.close();
      }
    },
  };
}

/** Everything an account change could touch, to show that a refused command changed nothing. */
const snapshot = (db: Queryable) =>
  Promise.all([
    db.query(
      'SELECT id, email, name, role, password_hash, disabled_at::text, devices_valid_after::text FROM users ORDER BY id',
    ),
    db.query('SELECT id, type, email FROM security_events ORDER BY id'),
    db.query('SELECT id_hash FROM sessions ORDER BY id_hash'),
    db.query('SELECT id, user_id FROM passkeys ORDER BY id'),
  ]);

/** Two sessions and two passkeys (one used) of the account `userId`, as a browser would have left them. */
const heldBy = async (db: Queryable, userId: number) => {
  await db.query(
    `INSERT INTO sessions (id_hash, user_id, expires_at)
     SELECT 'held' || $1::int || '-' || g, $1::int, now() + interval '1 hour' FROM generate_series(1, 2) g`,
    [userId],
  );
  await db.query(
    `INSERT INTO passkeys (user_id, credential_id, public_key, name, created_at, last_used_at)
     VALUES ($1::int, 'cred-a-' || $1::int, 'key', 'Laptop', '2026-01-02T03:04:05Z', '2026-02-03T04:05:06Z'),
            ($1::int, 'cred-b-' || $1::int, 'key', 'Not mine', '2026-03-04T05:06:07Z', NULL)`,
    [userId],
  );
};

const events = (db: Queryable) =>
  db.query<{ type: string; control: string; email: string }>(
    'SELECT type, control, email FROM security_events ORDER BY id',
  );

for (const kind of ['embedded', 'postgres'] as const) {
  describe(`npm run users (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('adds, sets a password, disables (ending sessions), enables and lists, each change a security event', async () => {
      const where = await target(kind);
      const added = await users(where.env, [
        'add',
        '--email',
        'Dana@Example.com',
        '--name',
        'Dana Scully',
        '--role',
        'admin',
      ]);
      assert.equal(added.code, 0, added.stderr);
      const generated = /^password: (\S+)$/m.exec(added.stdout)?.[1];
      assert.ok(generated && generated.length >= 12, added.stdout);
      const withInput = await users(
        where.env,
        ['add', '--email', 'eve@example.com', '--name', 'Eve', '--role', 'employee'],
        'a password from stdin\n',
      );
      assert.equal(withInput.code, 0, withInput.stderr);
      assert.doesNotMatch(withInput.stdout, /password:/, 'a given password is not printed');

      const hashes = await where.read((db) =>
        db.query<{ email: string; password_hash: string }>(
          'SELECT email, password_hash FROM users ORDER BY id',
        ),
      );
      assert.deepEqual(
        hashes.map((row) => row.email),
        ['dana@example.com', 'eve@example.com'],
      );
      assert.ok(await verifyPassword(generated, hashes[0]!.password_hash));
      assert.ok(await verifyPassword('a password from stdin', hashes[1]!.password_hash));

      const set = await users(
        where.env,
        ['set-password', '--email', 'EVE@example.com'],
        'another long password\n',
      );
      assert.equal(set.code, 0, set.stderr);
      await where.read((db) =>
        db.query(
          `INSERT INTO sessions (id_hash, user_id, expires_at)
           SELECT 'h' || g, 2, now() + interval '1 hour' FROM generate_series(1, 2) g`,
        ),
      );
      const disabled = await users(where.env, ['disable', '--email', 'eve@example.com']);
      assert.equal(disabled.code, 0, disabled.stderr);
      const again = await users(where.env, ['disable', '--email', 'eve@example.com']);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /disabled already: nothing changed/);
      const listed = await users(where.env, ['list']);
      assert.match(listed.stdout, /dana@example\.com\s+"Dana Scully"\s+active/);
      assert.match(listed.stdout, /eve@example\.com\s+"Eve"\s+disabled \d{4}-/);
      assert.equal((await users(where.env, ['enable', '--email', 'eve@example.com'])).code, 0);

      const after = await where.read(async (db) => ({
        sessions: await db.query('SELECT id_hash FROM sessions'),
        hash: (await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = 2'))[0]!,
        events: await events(db),
      }));
      assert.deepEqual(after.sessions, [], 'disabling ended every session');
      assert.ok(await verifyPassword('another long password', after.hash.password_hash));
      assert.deepEqual(after.events, [
        { type: 'account-created', control: 'users-cli', email: 'dana@example.com' },
        { type: 'account-created', control: 'users-cli', email: 'eve@example.com' },
        { type: 'password-set', control: 'users-cli', email: 'eve@example.com' },
        { type: 'sessions-ended', control: 'users-cli', email: 'eve@example.com' },
        { type: 'devices-forgotten', control: 'users-cli', email: 'eve@example.com' },
        { type: 'account-disabled', control: 'users-cli', email: 'eve@example.com' },
        { type: 'account-enabled', control: 'users-cli', email: 'eve@example.com' },
      ]);
    });

    it('cleans up a held account: set-password ends its sessions and forgets its devices; its passkeys are listed and removed', async () => {
      const where = await target(kind);
      for (const email of ['held@example.com', 'other@example.com'])
        assert.equal(
          (await users(where.env, ['add', '--email', email, '--name', 'H', '--role', 'employee'])).code,
          0,
        );
      await where.read(async (db) => {
        await heldBy(db, 1);
        await heldBy(db, 2);
      });

      const set = await users(
        where.env,
        ['set-password', '--email', 'held@example.com'],
        'a password the attacker never saw\n',
      );
      assert.equal(set.code, 0, set.stderr);
      assert.match(set.stdout, /2 sessions ended, its known devices forgotten/);
      const afterReset = await where.read(async (db) => ({
        sessions: await db.query<{ user_id: number }>('SELECT user_id FROM sessions ORDER BY id_hash'),
        revoked: await db.query<{ id: number }>(
          'SELECT id FROM users WHERE devices_valid_after IS NOT NULL ORDER BY id',
        ),
      }));
      assert.deepEqual(afterReset.sessions, [{ user_id: 2 }, { user_id: 2 }], 'only its own sessions ended');
      assert.deepEqual(afterReset.revoked, [{ id: 1 }], 'only its own devices are forgotten');

      const listed = await users(where.env, ['passkeys', '--email', 'Held@Example.com']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(listed.stdout.trimEnd().split('\n'), [
        '    1  "Laptop"  added 2026-01-02T03:04:05.000Z  last used 2026-02-03T04:05:06.000Z',
        '    2  "Not mine"  added 2026-03-04T05:06:07.000Z  never used',
      ]);
      const removed = await users(where.env, ['remove-passkeys', '--email', 'held@example.com']);
      assert.equal(removed.code, 0, removed.stderr);
      assert.match(removed.stdout, /removed 2 passkeys of held@example\.com: "Laptop", "Not mine"/);
      assert.match(
        (await users(where.env, ['passkeys', '--email', 'held@example.com'])).stdout,
        /has no passkeys/,
      );
      const again = await users(where.env, ['remove-passkeys', '--email', 'held@example.com']);
      assert.match(again.stdout, /has no passkeys: nothing changed/);

      const held = await where.read(async (db) => ({
        passkeys: await db.query<{ user_id: number }>('SELECT user_id FROM passkeys ORDER BY id'),
        events: (await events(db)).filter((event) => event.email === 'held@example.com'),
      }));
      assert.deepEqual(held.passkeys, [{ user_id: 2 }, { user_id: 2 }], "another account's passkeys stay");
      assert.deepEqual(
        held.events.map((event) => [event.type, event.control]),
        [
          ['account-created', 'users-cli'],
          ['password-set', 'users-cli'],
          ['sessions-ended', 'users-cli'],
          ['devices-forgotten', 'users-cli'],
          ['passkey-removed', 'users-cli'],
          ['passkey-removed', 'users-cli'],
        ],
      );
    });

    it('says in one line that there are no accounts yet', async () => {
      const where = await target(kind);
      const listed = await users(where.env, ['list']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stdout, 'no accounts in this database\n');
    });

    it('never creates a database: one no server ever set up is one line naming the variable, exit 1', async () => {
      const where = await target(kind, { serverStarted: false });
      const variable = kind === 'embedded' ? 'DATA_DIR' : 'DATABASE_URL';
      for (const args of [
        ['add', '--email', 'zed@example.com', '--name', 'Zed', '--role', 'admin'],
        ['list'],
      ]) {
        const run = await users(where.env, args);
        assert.equal(run.code, 1, args.join(' '));
        assert.equal(run.stdout, '');
        assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
        assert.match(run.stderr, new RegExp(`^users: ${variable}=\\S+ (holds|names) (no )?(a )?database`));
        assert.doesNotMatch(run.stderr, /postgres:\/\/[^@\s]*@/, 'no user or password in the line');
      }
      if (kind === 'embedded') {
        assert.deepEqual(await readdir(where.env.DATA_DIR!), [], 'nothing was put in the directory');
        const typo = join(where.env.DATA_DIR!, 'dat');
        const run = await users({ DATA_DIR: typo }, [
          'add',
          '--email',
          'zed@example.com',
          '--name',
          'Z',
          '--role',
          'admin',
        ]);
        assert.equal(run.code, 1);
        assert.match(run.stderr, /^users: DATA_DIR=\S+\/dat holds no database/);
        assert.equal(existsSync(typo), false, 'the misspelt directory was not made');
      } else {
        const tables = await where.read((db) =>
          db.query('SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()'),
        );
        assert.deepEqual(tables, [], 'no table was created');
      }
    });

    it('answers bad input with one line on stderr and a non-zero exit, and changes nothing', async () => {
      const where = await target(kind);
      assert.equal(
        (await users(where.env, ['add', '--email', 'f@example.com', '--name', 'F', '--role', 'employee']))
          .code,
        0,
      );
      const before = await where.read(snapshot);
      const cases: [string[], string, RegExp][] = [
        [
          [
            'add',
            '--email',
            'g@example.com',
            '--name',
            'G',
            '--role',
            'employee',
            '--password',
            'secret-secret',
          ],
          '',
          /never taken on the command line/,
        ],
        [
          ['add', '--email', 'g@example.com', '--name', 'G', '--role', 'boss'],
          '',
          /--role must be employee or admin/,
        ],
        [['add', '--email', 'not-an-email', '--name', 'G', '--role', 'employee'], '', /not an email address/],
        [['add', '--email', 'g@example.com', '--role', 'employee'], '', /--name is required/],
        [
          ['add', '--email', 'g@example.com', '--name', 'G', '--role', 'employee'],
          'short\n',
          /\(too_short\)/,
        ],
        // The password rules (auth/password-rules.ts): 12 to 128 characters, not the email, not common.
        [
          ['add', '--email', 'g@example.com', '--name', 'G', '--role', 'employee'],
          `${'x'.repeat(129)}\n`,
          /refused \(too_long\): Choose a shorter password: at most 128 characters/,
        ],
        [['set-password', '--email', 'f@example.com'], `${'é'.repeat(129)}\n`, /\(too_long\)/],
        [['set-password', '--email', 'f@example.com'], 'Password1234\n', /refused \(common\)/],
        [
          ['set-password', '--email', 'f@example.com'],
          'abcabcabcabc\n',
          /refused \(weak\): This password is easy to guess/,
        ],
        [['set-password', '--email', 'frederic@example.com'], 'my name is Frederic!\n', /\(contains_email\)/],
        // What the sign-in refuses cannot be set: U+0000.
        [['set-password', '--email', 'f@example.com'], 'twelve chars and\u0000a NUL\n', /contains U\+0000/],
        [['passkeys', '--email', 'nobody@example.com'], '', /no account has the email/],
        [['remove-passkeys', '--email', 'nobody@example.com'], '', /no account has the email/],
        [['remove-passkeys'], '', /remove-passkeys: --email is required/],
        [['passkeys', '--email', 'not-an-email'], '', /not an email address/],
        [['add', '--email', 'F@example.com', '--name', 'F again', '--role', 'admin'], '', /exists already/],
        [['disable', '--email', 'nobody@example.com'], '', /no account has the email/],
        [['set-password', '--email', 'f@example.com'], '', /give the new password on standard input/],
        [['remove', '--email', 'f@example.com'], '', /unknown command "remove"/],
        [['list', '--all'], '', /list: Unknown option '--all'/],
      ];
      for (const [args, input, message] of cases) {
        const run = await users(where.env, args, input);
        assert.notEqual(run.code, 0, args.join(' '));
        assert.equal(run.stdout, '', args.join(' '));
        assert.equal(
          run.stderr.trimEnd().split('\n').length,
          1,
          `one line for ${args.join(' ')}:\n${run.stderr}`,
        );
        assert.match(run.stderr, message);
      }
      assert.deepEqual(await where.read(snapshot), before);
    });
  });
}

describe('npm run users with a server running on the embedded database', () => {
  it('says so in one line, and leaves the server serving', async (t) => {
    const where = await target('embedded', { serverStarted: false });
    const server = startServer({ DATA_DIR: where.env.DATA_DIR! });
    t.after(() => server.child.kill('SIGKILL'));
    const url = await listeningUrl(server.output, server.exited);
    const run = await users({ ...where.env, NODE_ENV: 'development' }, ['list']);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^users: the embedded database in .* is in use by another process \(a running server\?\)/,
    );
    assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const listed = await users({ ...where.env, NODE_ENV: 'development' }, ['list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /admin@example\.com/);
  });
});

describe('a production start, as the image runs it', () => {
  const production = { NODE_ENV: 'production', SESSION_SECRET: 's'.repeat(32) };

  it('creates no demo account and logs how to create the first admin', async (t) => {
    const where = await target('embedded', { serverStarted: false });
    const server = startServer({ ...where.env, ...production });
    t.after(() => server.child.kill('SIGKILL'));
    await listeningUrl(server.output, server.exited);
    assert.match(
      server.output(),
      /no admin account may sign in: set BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD/,
    );
    assert.doesNotMatch(server.output(), /Seeded demo data|demo-password/);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.deepEqual(await where.read((db) => db.query('SELECT id FROM users')), []);
  });

  it('warns of the published passwords when SEED_DEMO=true seeds them anyway', async (t) => {
    const where = await target('embedded', { serverStarted: false });
    const server = startServer({ ...where.env, ...production, SEED_DEMO: 'true' });
    t.after(() => server.child.kill('SIGKILL'));
    await listeningUrl(server.output, server.exited);
    assert.match(server.output(), /Seeded demo data/);
    assert.match(
      server.output(),
      /"level":40,.*SEED_DEMO=true under NODE_ENV=production: the demo accounts have a published password/,
    );
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });
});
