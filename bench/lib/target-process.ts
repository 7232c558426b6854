// Driver side of a target: fork it (pinned with taskset), learn its port, ask for CPU and RSS, stop it.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DriverMessage, TargetMessage } from './serve.ts';

export interface TargetSpec {
  /** Short name used in tables and BENCH_TARGETS filters. */
  readonly name: string;
  /** File under bench/targets/, without extension. */
  readonly file: string;
  readonly env?: Record<string, string>;
  /** Extra node flags (`--cpu-prof`, …). */
  readonly nodeArgs?: readonly string[];
  /** A command that runs node (`valgrind --tool=callgrind …`): node and its arguments follow it. */
  readonly launcher?: readonly string[];
}

export interface TargetStats {
  readonly cpuMicros: number;
  readonly rss: number;
  /** The target's monotonic clock (µs), the time base of its --cpu-prof samples. */
  readonly monotonicMicros: number;
  /** Bytes in V8's old space now: it shrinks only when a full collection runs. */
  readonly oldSpaceUsed: number;
}

const READY_TIMEOUT_MS = 180_000;
/** Under a launcher such as valgrind, a start (ours: a database, a thousand logins) is far slower. */
const LAUNCHED_READY_TIMEOUT_MS = 1_200_000;

export class TargetProcess {
  private nextId = 0;
  private readonly waiting = new Map<number, (stats: TargetStats) => void>();

  readonly spec: TargetSpec;
  private readonly child: ChildProcess;
  readonly port: number;
  readonly extra: unknown;

  private constructor(spec: TargetSpec, child: ChildProcess, port: number, extra: unknown) {
    this.spec = spec;
    this.child = child;
    this.port = port;
    this.extra = extra;
    child.on('message', (message: TargetMessage) => {
      if (message.type !== 'stats') return;
      const { cpuMicros, rss, monotonicMicros, oldSpaceUsed } = message;
      this.waiting.get(message.id)?.({ cpuMicros, rss, monotonicMicros, oldSpaceUsed });
      this.waiting.delete(message.id);
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the target, pinned to `core` when given, and resolves once it listens. */
  static start(spec: TargetSpec, core: number | null): Promise<TargetProcess> {
    const file = fileURLToPath(new URL(`../targets/${spec.file}.ts`, import.meta.url));
    const nodeArgs = [...(spec.nodeArgs ?? [])];
    // taskset (and a launcher) execs node, which keeps the IPC channel fork opened; every thread
    // inherits the core.
    const command = [
      ...(core === null ? [] : ['taskset', '-c', String(core)]),
      ...(spec.launcher ?? []),
      process.execPath,
      ...nodeArgs,
    ];
    const child = fork(file, [], {
      execPath: command[0]!,
      execArgv: command.slice(1),
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    return new Promise((resolve, reject) => {
      const timeout = spec.launcher ? LAUNCHED_READY_TIMEOUT_MS : READY_TIMEOUT_MS;
      const timer = setTimeout(() => {
        child.kill();
        reject(new Error(`${spec.name} did not start within ${timeout / 1000} s\n${stderr}`));
      }, timeout);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${spec.name} exited with ${code} before listening\n${stderr}`));
      });
      child.on('message', function ready(message: TargetMessage) {
        if (message.type !== 'ready') return;
        clearTimeout(timer);
        child.off('message', ready);
        child.removeAllListeners('exit');
        resolve(new TargetProcess(spec, child, message.port, message.extra));
      });
    });
  }

  /** CPU time (µs, user + system) the target has used so far, and its RSS now. */
  stats(): Promise<TargetStats> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.send({ type: 'stats', id });
    });
  }

  /** Asks the target to close and exit (so `--cpu-prof` writes its profile); kills it after 10 s. */
  stop(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const force = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      this.child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      this.send({ type: 'stop' });
    });
  }

  private send(message: DriverMessage): void {
    this.child.send(message);
  }
}
