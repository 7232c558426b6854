// Target side of the bench protocol: listen on a loopback port, then report port, CPU and RSS over IPC.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getHeapSpaceStatistics } from 'node:v8';

/** Messages the driver sends a target. */
export type DriverMessage = { type: 'stats'; id: number } | { type: 'stop' };

/** Messages a target sends the driver. */
export type TargetMessage =
  | { type: 'ready'; port: number; extra?: unknown }
  | {
      type: 'stats';
      id: number;
      cpuMicros: number;
      rss: number;
      monotonicMicros: number;
      oldSpaceUsed: number;
    };

/**
 * Listens on 127.0.0.1 (a free port), tells the driver the port, answers its `stats` requests with
 * this process's CPU time (user + system, µs), RSS and V8's old space, and exits on `stop` so that `--cpu-prof`
 * gets to write its profile.
 */
export async function serveTarget(
  server: Server,
  options: { extra?: unknown; close?: () => Promise<void> } = {},
): Promise<void> {
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  process.on('message', (message: DriverMessage) => {
    if (message.type === 'stats') {
      const cpu = process.cpuUsage();
      send({
        type: 'stats',
        id: message.id,
        cpuMicros: cpu.user + cpu.system,
        rss: process.memoryUsage.rss(),
        // The clock of --cpu-prof sample times, so a profile can be cut to the measured run.
        monotonicMicros: Number(process.hrtime.bigint() / 1000n),
        oldSpaceUsed:
          getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0,
      });
    } else if (message.type === 'stop') {
      server.closeAllConnections?.();
      const close = options.close ?? (() => new Promise<void>((resolve) => server.close(() => resolve())));
      close().finally(() => process.exit(0));
    }
  });
  // The driver going away must not leave a server behind.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', port, extra: options.extra });
}

function send(message: TargetMessage): void {
  process.send?.(message);
}

/** Reads a positive integer from the environment (the driver passes budgets this way). */
export function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** One signed-in bench user: the cookie header to send and the CSRF token for unsafe requests. */
export interface BenchSession {
  readonly cookie: string;
  readonly csrfToken: string;
}

/** The bench's users (`bench-1@example.test` …), BENCH_USERS of them. */
export const benchEmails = (): string[] =>
  Array.from({ length: envInt('BENCH_USERS', 1000) }, (_, i) => `bench-${i + 1}@example.test`);

/** Signs every bench user in with `logIn`, a few at a time; the sessions in user order. */
export async function logInAll(logIn: (email: string) => Promise<BenchSession>): Promise<BenchSession[]> {
  const emails = benchEmails();
  const sessions: BenchSession[] = new Array(emails.length);
  for (let start = 0; start < emails.length; start += LOGIN_CONCURRENCY) {
    const batch = emails.slice(start, start + LOGIN_CONCURRENCY);
    await Promise.all(batch.map(async (email, i) => (sessions[start + i] = await logIn(email))));
  }
  return sessions;
}
const LOGIN_CONCURRENCY = 8;

/** The `Cookie` header a browser sends back for these `Set-Cookie` headers. */
export function cookieHeader(setCookie: string | readonly string[] | number | undefined): string {
  const list = Array.isArray(setCookie) ? setCookie : setCookie === undefined ? [] : [String(setCookie)];
  return list.map((line) => String(line).split(';')[0]).join('; ');
}
