// The service's pino settings: JSON lines in production and pipes, readable lines in a development terminal.
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type LoggerOptions } from 'pino';

/** Headers and cookies that carry credentials: never written to a log. */
const REDACT = [
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
];

export interface LogSettings {
  readonly level: string;
  readonly production: boolean;
}

/**
 * Pretty lines only when a person reads them (stdout is a terminal), outside production, and when
 * pino-pretty is installed: it is a development dependency, absent from a pruned production image.
 * Everywhere else the lines stay JSON for the log collector, on pino's default stdout.
 */
export function loggerOptions(
  settings: LogSettings,
  stdoutIsTerminal = process.stdout.isTTY === true,
): LoggerOptions {
  const options: LoggerOptions = { level: settings.level, redact: REDACT };
  if (settings.production || !stdoutIsTerminal || !installed('pino-pretty')) return options;
  return {
    ...options,
    transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } },
  };
}

function installed(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
}

let stdout: DestinationStream | null = null;

/** What may wait for a stdout nobody reads (sonic-boom's `maxLength`): beyond it new lines are dropped. */
const PENDING_LOG_BYTES = 16 * 1024 * 1024;

/**
 * Where the JSON lines go: stdout through pino's own destination (sonic-boom) in pino's default
 * mode, the one Fastify's `logger: true` uses. A line is written as soon as the write before it
 * has finished, from libuv's pool (which has threads the password checks cannot take, config.ts
 * `threadPoolSize`); lines logged meanwhile leave together in the next write. Pino flushes what is
 * pending when the process exits, also on an uncaught exception; only a SIGKILL can lose the lines
 * of the write in flight. Writing each line synchronously instead kept even those, for more
 * instructions and one system call more per request on the event loop (measured: BENCHMARKS.md).
 * One per process: tests build many apps, and stdout is one.
 */
export function logDestination(): DestinationStream {
  stdout ??= pino.destination({ dest: 1, sync: false, maxLength: PENDING_LOG_BYTES });
  return stdout;
}
