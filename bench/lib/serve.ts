// Target side of the bench protocol: listen on a loopback port, then report port, CPU and RSS over IPC.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Messages the driver sends a target. */
export type DriverMessage = { type: 'stats'; id: number } | { type: 'stop' };

/** Messages a target sends the driver. */
export type TargetMessage =
  | { type: 'ready'; port: number; extra?: unknown }
  | { type: 'stats'; id: number; cpuMicros: number; rss: number; monotonicMicros: number };

/**
 * Listens on 127.0.0.1 (a free port), tells the driver the port, answers its `stats` requests with
 * this process's CPU time (user + system, µs) and RSS, and exits on `stop` so that `--cpu-prof`
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
