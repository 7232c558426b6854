// Private redis-server processes for tests that stop, restart or cluster Redis (never the shared one).
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { servicesRequired } from './services.ts';

const run = promisify(execFile);

/** `false` when redis-server and redis-cli can be started here, else a skip message (throws in CI). */
export function skipUnlessRedisBinaries(): false | string {
  const missing = ['redis-server', 'redis-cli'].filter(
    (binary) => spawnSync(binary, ['--version'], { stdio: 'ignore' }).status !== 0,
  );
  if (missing.length === 0) return false;
  const message = `${missing.join(' and ')} not found on PATH`;
  if (servicesRequired) throw new Error(`${message}, and REQUIRE_SERVICES=1`);
  console.log(`# skipped: ${message} (set REQUIRE_SERVICES=1 to make this a failure)`);
  return `${message}; skipped`;
}

/** The one port of our range that `fetch` refuses to connect to (the Fetch standard's "bad ports"). */
const FETCH_BLOCKED_PORT = 10_080;

/**
 * A loopback port nobody listens on now, and its cluster bus port (+ 10000) too. Drawn at random
 * below the kernel's ephemeral range (32768+): a port the kernel hands out for `listen(0)` could
 * be given to another test file's server while ours is stopped, and our restart would then find a
 * stranger on its port.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 12_000);
    if (port === FETCH_BLOCKED_PORT) continue;
    if ((await isFree(port)) && (await isFree(port + 10_000))) return port;
  }
}

async function isFree(port: number): Promise<boolean> {
  return listenOnce(port).then(
    () => true,
    () => false,
  );
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

export class RedisServer {
  private process: ChildProcess | null = null;

  readonly port: number;
  private readonly dir: string;
  private readonly extraArgs: readonly string[];

  private constructor(port: number, dir: string, extraArgs: readonly string[]) {
    this.port = port;
    this.dir = dir;
    this.extraArgs = extraArgs;
  }

  /**
   * Starts a redis-server on a free loopback port, without persistence, in its own temp dir; `args`
   * are more options for it (a configuration under test).
   */
  static async start(
    options: { cluster?: boolean; dir?: string; args?: readonly string[] } = {},
  ): Promise<RedisServer> {
    const port = await freePort();
    const dir = options.dir ?? (await mkdtemp(path.join(tmpdir(), 'tp-redis-')));
    const cluster = options.cluster
      ? [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '2000',
        ]
      : [];
    const extra = [...cluster, ...(options.args ?? [])];
    const server = new RedisServer(port, dir, extra);
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.process !== null;
  }

  /** (Re)starts the process on the same port and waits until it answers PING. */
  async restart(): Promise<void> {
    if (this.process) return;
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        ...this.extraArgs,
      ],
      { stdio: 'ignore' },
    );
    this.process = child;
    child.once('exit', () => {
      if (this.process === child) this.process = null;
    });
    const deadline = Date.now() + 10_000;
    while (!(await this.ping())) {
      if (this.process !== child || Date.now() > deadline)
        throw new Error(`redis-server on port ${this.port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The server answering must be ours, not another test's that took the port meanwhile.
    const pid = /process_id:(\d+)/.exec(await this.cli('INFO', 'server'))?.[1];
    if (Number(pid) !== child.pid) throw new Error(`port ${this.port} is answered by another redis-server`);
  }

  /** Kills the process (SIGKILL: an abrupt death, as when a host fails) and waits for its exit. */
  async kill(): Promise<void> {
    const child = this.process;
    if (!child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.process = null;
  }

  /** Freezes the process (SIGSTOP): connections stay open but nothing answers, as with a hung host. */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
  }

  /** Runs redis-cli against this server; returns its output. */
  async cli(...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(this.port), ...args]);
    return stdout.trim();
  }

  async stop(removeDir = true): Promise<void> {
    await this.kill();
    if (removeDir) await rm(this.dir, { recursive: true, force: true });
  }

  private async ping(): Promise<boolean> {
    try {
      return (await this.cli('ping')) === 'PONG';
    } catch {
      return false;
    }
  }
}

/** A Redis Cluster of three masters, no replicas, on loopback ports, in one temp dir. */
export class RedisCluster {
  readonly nodes: readonly RedisServer[];
  private readonly dir: string;

  private constructor(nodes: readonly RedisServer[], dir: string) {
    this.nodes = nodes;
    this.dir = dir;
  }

  static async start(): Promise<RedisCluster> {
    const dir = await mkdtemp(path.join(tmpdir(), 'tp-redis-cluster-'));
    const nodes: RedisServer[] = [];
    try {
      for (let i = 0; i < 3; i++) nodes.push(await RedisServer.start({ cluster: true, dir }));
      await run('redis-cli', [
        '--cluster',
        'create',
        ...nodes.map((node) => `127.0.0.1:${node.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      const deadline = Date.now() + 20_000;
      for (const node of nodes) {
        while (!(await node.cli('cluster', 'info')).includes('cluster_state:ok')) {
          if (Date.now() > deadline) throw new Error('the test cluster did not reach cluster_state:ok');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    } catch (error) {
      await Promise.all(nodes.map((node) => node.stop(false)));
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    return new RedisCluster(nodes, dir);
  }

  /** In the form of REDIS_CLUSTER_NODES. */
  get nodeList(): string {
    return this.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop(false)));
    await rm(this.dir, { recursive: true, force: true });
  }
}
