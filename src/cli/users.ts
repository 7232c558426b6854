// The account command line (docs/rules.md#accounts): add, disable, enable, set-password, list, passkeys.
// Run: npm run users -- <command>   (in the image: node src/cli/users.ts <command>)
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AccountError, CliAccounts } from '../accounts/cli-accounts.ts';
import {
  hasUnstorableCharacter,
  offlineRefusal,
  PasswordRules,
  UNSTORABLE_PASSWORD,
} from '../auth/password-rules.ts';
import { hashPassword } from '../auth/passwords.ts';
import { generatePassword } from '../auth/temporary-passwords.ts';
import { systemClock } from '../clock.ts';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { DatabaseUnavailableError } from '../db/availability.ts';
import { DataDirError } from '../db/data-dir-lock.ts';
import { type Database, holdsEmbeddedDatabase, openDatabase } from '../db/database.ts';
import { hasBeenMigrated, migrate } from '../db/migrate.ts';
import { ROLES, type Role } from '../domain.ts';
import { isEmailAddress } from '../email.ts';

const USAGE = `usage: npm run users -- <command> [options]   (in the image: node src/cli/users.ts <command> ...)
  add --email <email> --name <name> --role employee|admin
        the password comes from standard input; with none, one is generated and printed
  disable --email <email>       it cannot sign in by any means; its sessions and device cookies end
  enable --email <email>
  set-password --email <email>  the new password from standard input; its sessions end and its
                                known devices are forgotten (its passkeys stay: remove-passkeys)
  list
  passkeys --email <email>      its passkeys: name, when added, when last used
  remove-passkeys --email <email>   removes every passkey of the account`;

/** Bad input: said in one line, and nothing was changed. */
class UsageError extends Error {}

type Command = 'add' | 'disable' | 'enable' | 'set-password' | 'list' | 'passkeys' | 'remove-passkeys';
const text = { type: 'string' } as const;
const OPTIONS = {
  add: { email: text, name: text, role: text },
  disable: { email: text },
  enable: { email: text },
  'set-password': { email: text },
  list: {},
  passkeys: { email: text },
  'remove-passkeys': { email: text },
} as const satisfies Record<Command, Record<string, typeof text>>;

/** Runs one command and answers its exit code; bad input throws before the database is opened. */
async function run(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || ['help', '--help', '-h'].includes(command)) {
    (command ? process.stdout : process.stderr).write(`${USAGE}\n`);
    return command ? 0 : 1;
  }
  if (!Object.hasOwn(OPTIONS, command))
    throw new UsageError(`unknown command "${command}": expected one of ${Object.keys(OPTIONS).join(', ')}`);
  const options = parseOptions(command as Command, rest);
  const password = await passwordFor(command as Command, options.email ?? '');

  // The command line signs nothing: without SESSION_SECRET (required in production) any will do.
  const config = loadConfig({
    ...process.env,
    SESSION_SECRET: process.env.SESSION_SECRET || randomBytes(32).toString('base64url'),
  });
  const db = await openServersDatabase(config);
  try {
    await migrate(db);
    const accounts = new CliAccounts(db, {
      clock: systemClock,
      instance: config.instanceId,
      hashPassword: (plain) => hashPassword(plain, config.passwordHashCost),
      rules: new PasswordRules({
        breachApi: config.passwordBreachApi.url,
        breachApiRequired: config.passwordBreachApi.required,
        onBreachApiTrouble: (error) =>
          console.error(
            `users: warning: the breached-password API did not answer (${(error as Error).message}): the password was let through`,
          ),
      }),
    });
    switch (command as Command) {
      case 'add': {
        const generated = password === null ? generatePassword() : null;
        const user = await accounts.add({
          email: options.email!,
          name: options.name!,
          role: options.role as Role,
          password: password ?? generated!,
        });
        console.log(`added ${user.role} ${user.email} (id ${user.id})`);
        if (generated) console.log(`password: ${generated}`);
        return 0;
      }
      case 'disable':
        console.log(
          (await accounts.disable(options.email!))
            ? `disabled ${options.email}: its sessions and device cookies have ended`
            : `${options.email} is disabled already: nothing changed`,
        );
        return 0;
      case 'enable':
        console.log(
          (await accounts.enable(options.email!))
            ? `enabled ${options.email}: it may sign in again`
            : `${options.email} is not disabled: nothing changed`,
        );
        return 0;
      case 'set-password': {
        const { sessionsEnded } = await accounts.setPassword(options.email!, password!);
        console.log(
          `set a new password for ${options.email}: ${count(sessionsEnded, 'session')} ended, its known devices forgotten`,
        );
        return 0;
      }
      case 'passkeys': {
        const { user, passkeys } = await accounts.passkeys(options.email!);
        if (passkeys.length === 0) console.log(`${user.email} has no passkeys`);
        for (const passkey of passkeys)
          console.log(
            [
              String(passkey.id).padStart(5),
              JSON.stringify(passkey.name),
              `added ${passkey.createdAt}`,
              passkey.lastUsedAt === null ? 'never used' : `last used ${passkey.lastUsedAt}`,
            ].join('  '),
          );
        return 0;
      }
      case 'remove-passkeys': {
        const { user, removed } = await accounts.removePasskeys(options.email!);
        console.log(
          removed.length === 0
            ? `${user.email} has no passkeys: nothing changed`
            : `removed ${count(removed.length, 'passkey')} of ${user.email}: ${removed.map((p) => JSON.stringify(p.name)).join(', ')}`,
        );
        return 0;
      }
      case 'list': {
        const listed = await accounts.list();
        if (listed.length === 0) console.log('no accounts in this database');
        for (const account of listed) {
          const state =
            account.disabledAt === null ? 'active' : `disabled ${new Date(account.disabledAt).toISOString()}`;
          console.log(
            [
              String(account.id).padStart(5),
              account.role.padEnd(8),
              account.email,
              `"${account.name}"`,
              state,
            ].join('  '),
          );
        }
        return 0;
      }
    }
  } finally {
    await db.close();
  }
}

/**
 * The server's database, opened only if a server has made it: the command line never creates one
 * (docs/rules.md#running-it). A DATA_DIR that holds no database, or a PostgreSQL database no server
 * migrated, is one line naming the variable, and nothing is created: a typo must not put an admin
 * where no server looks. Pending migrations of a database a server made are applied, as a server
 * of this version would.
 */
async function openServersDatabase(config: Config): Promise<Database> {
  if (!config.databaseUrl && !holdsEmbeddedDatabase(config.dataDir))
    throw new UsageError(
      `DATA_DIR=${config.dataDir} holds no database (no server has started on it): set DATA_DIR to the server's; nothing was created`,
    );
  const db = await openDatabase({ ...config, template: false });
  if (await hasBeenMigrated(db)) return db;
  await db.close();
  const where = config.databaseUrl
    ? `DATABASE_URL=${withoutCredentials(config.databaseUrl)} names a database`
    : `DATA_DIR=${config.dataDir} holds a database`;
  throw new UsageError(
    `${where} that no server has set up (no migrations ran on it): point it at the server's database, or start the server on it once; nothing was changed`,
  );
}

/** A database URL without its user and password, for a message. */
function withoutCredentials(url: string): string {
  const { protocol, host, pathname } = new URL(url);
  return `${protocol}//${host}${pathname}`;
}

/** The command's options, each required one present and well formed (checked before any database work). */
function parseOptions(
  command: Command,
  args: readonly string[],
): { email?: string; name?: string; role?: string } {
  if (args.some((arg) => /^--?(password|pass|pw)(=|$)/i.test(arg)))
    throw new UsageError('a password is never taken on the command line: give it on standard input');
  let values: Record<string, string | undefined>;
  try {
    const parsed = parseArgs({ args: [...args], options: OPTIONS[command], strict: true });
    values = parsed.values as Record<string, string | undefined>;
  } catch (error) {
    throw new UsageError(`${command}: ${(error as Error).message.split('\n')[0]}`);
  }
  for (const name of Object.keys(OPTIONS[command]))
    if (!values[name]) throw new UsageError(`${command}: --${name} is required`);
  if (values.email !== undefined && !isEmailAddress(values.email))
    throw new UsageError(`not an email address: ${JSON.stringify(values.email)}`);
  if (values.role !== undefined && !(ROLES as readonly string[]).includes(values.role))
    throw new UsageError(`--role must be employee or admin, not ${JSON.stringify(values.role)}`);
  return values;
}

/**
 * The password a command takes, from standard input: `add` generates one when none comes (a
 * terminal, or empty input); `set-password` asks a terminal without echo, and needs one.
 */
async function passwordFor(command: Command, email: string): Promise<string | null> {
  if (command !== 'add' && command !== 'set-password') return null;
  const given = process.stdin.isTTY
    ? command === 'add'
      ? ''
      : await askHidden('new password: ')
    : await readAll(process.stdin);
  const password = given.replace(/\r?\n$/, '');
  if (password === '') {
    if (command === 'add') return null;
    throw new UsageError('set-password: give the new password on standard input');
  }
  // The password rules that need no network, before the database is opened (the breached-password
  // API, when configured, is asked by the change itself).
  if (hasUnstorableCharacter(password)) throw new UsageError(`the password is ${UNSTORABLE_PASSWORD}`);
  const refusal = offlineRefusal(password, email);
  if (refusal) throw new UsageError(`the password is refused (${refusal.reason}): ${refusal.message}`);
  return password;
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let all = '';
  for await (const chunk of stream) all += chunk;
  return all;
}

/** Reads one line from the terminal without showing it. */
async function askHidden(question: string): Promise<string> {
  process.stderr.write(question);
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const reader = createInterface({ input: process.stdin, output: silent, terminal: true });
  try {
    return await new Promise<string>((resolve) => reader.question('', resolve));
  } finally {
    reader.close();
    process.stderr.write('\n');
  }
}

/** One line for a person for every failure this command line expects; anything else keeps its stack. */
function oneLine(error: unknown): string | null {
  if (error instanceof UsageError || error instanceof AccountError || error instanceof DataDirError)
    return error.message;
  if (error instanceof ConfigError) return `invalid configuration: ${error.problems.join('; ')}`;
  if (error instanceof DatabaseUnavailableError)
    return `the database cannot be reached: ${(error.cause as Error | undefined)?.message ?? 'no answer'}`;
  return null;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  run(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      const line = oneLine(error);
      console.error(line === null ? error : `users: ${line}`);
      process.exitCode = 1;
    },
  );
}
