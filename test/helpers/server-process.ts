// The real entry point as a child process: the tests' environment, its output kept, its address awaited.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url));

export interface ServerProcess {
  readonly child: ChildProcess;
  /** Everything written so far, stdout and stderr together. */
  output(): string;
  /** The exit code; null when a signal ended the process. */
  readonly exited: Promise<number | null>;
}

/** Starts `src/server.ts` on ports the system picks (metrics off), with `env` on top (as another user with `as`). */
export function startServer(
  env: Record<string, string>,
  as: { readonly uid: number; readonly gid: number } | null = null,
): ServerProcess {
  const child = spawn(process.execPath, [SERVER], {
    ...as,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      PASSWORD_HASH_COST: '64',
      PORT: '0',
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk) => (text += chunk));
  child.stderr!.on('data', (chunk) => (text += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** Waits until the server says where it listens (startup includes booting the embedded database). */
export async function listeningUrl(output: () => string, exited: Promise<number | null>): Promise<string> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output());
    if (match) return match[1]!;
    const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r('waiting'), 100))]);
    if (done !== 'waiting') throw new Error(`the server exited early:\n${output()}`);
  }
  throw new Error(`the server did not start:\n${output()}`);
}

/**
 * The global fetch, asking the server to close the connection after its answer. A keep-alive
 * connection the test leaves idle would hold a SIGTERM's drain for its idle grace (half of
 * SHUTDOWN_TIMEOUT: 5 s of every stop); the drain's wait for an idle connection is tested where it
 * is meant (test/process/ports-and-signals.test.ts, test/integration/drain.test.ts).
 */
export function fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('connection', 'close');
  return globalThis.fetch(input, { ...init, headers });
}
