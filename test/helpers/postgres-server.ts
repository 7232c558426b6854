// A private PostgreSQL server (initdb + pg_ctl in a temp dir, own port) for tests that stop and restart it.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis-server.ts';
import { servicesRequired } from './services.ts';

const run = promisify(execFile);

/** The directory of PostgreSQL's server binaries (Debian keeps them off PATH), newest version first. */
function binDir(): string | null {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const version of versions) {
    const dir = path.join(root, version, 'bin');
    if (existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return null;
}

/** `false` when initdb and pg_ctl are installed, else a skip message (throws when services are required). */
export function skipUnlessPostgresBinaries(): false | string {
  if (binDir()) return false;
  const message = 'initdb and pg_ctl not found under /usr/lib/postgresql/*/bin';
  if (servicesRequired) throw new Error(`${message}, and REQUIRE_SERVICES=1`);
  console.log(`# skipped: ${message} (set REQUIRE_SERVICES=1 to make this a failure)`);
  return `${message}; skipped`;
}

/**
 * PostgreSQL refuses to run as root: as root the binaries run as the `postgres` user, on a data
 * directory handed to that user.
 */
const asRoot = userInfo().uid === 0;

export class PostgresServer {
  readonly port: number;
  private readonly dir: string;
  private readonly bin: string;

  private constructor(port: number, dir: string, bin: string) {
    this.port = port;
    this.dir = dir;
    this.bin = bin;
  }

  /** initdb (trust auth, no fsync) in a temp dir, then starts the server on a free loopback port. */
  static async start(): Promise<PostgresServer> {
    const bin = binDir();
    if (!bin) throw new Error('PostgreSQL binaries not found');
    const dir = await mkdtemp(path.join(tmpdir(), 'tp-postgres-'));
    await chmod(dir, 0o755);
    if (asRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    const server = new PostgresServer(await freePort(), dir, bin);
    await server.exec('initdb', [
      '-D',
      server.dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    await server.restart();
    return server;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  /** Starts the server and waits until it accepts connections. */
  async restart(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      "-c listen_addresses='127.0.0.1'",
      `-c unix_socket_directories='${this.dir}'`,
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=60',
      '-c shared_buffers=16MB',
    ].join(' ');
    await this.exec('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      path.join(this.dir, 'server.log'),
      '-o',
      options,
      '-w',
      '-t',
      '60',
      'start',
    ]);
  }

  /** Stops the server the way an operator's restart does: `fast` ends every session at once. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.exec('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  /** Stops the server (if running) and removes its directory. */
  async destroy(): Promise<void> {
    await this.stop('immediate').catch(() => {});
    await rm(this.dir, { recursive: true, force: true });
  }

  private async exec(binary: string, args: string[]): Promise<void> {
    const file = path.join(this.bin, binary);
    const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
    await run(command, argv, { cwd: this.dir });
  }
}
