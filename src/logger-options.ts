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

/**
 * Where the JSON lines go: stdout through sonic-boom (pino.destination), each line written
 * synchronously as it is logged, so none waits in memory at exit or on a crash. Why not pino's
 * default stdout (asynchronous): it writes each line from a libuv pool thread (a wake-up and a
 * futex per write, on the pool the password checks use), and while one write is in flight it
 * appends the next lines to one string whose UTF-8 length it measures again for every line. Why
 * not sonic-boom's buffering (`minLength`) either: it builds its batch the same way, and its
 * batches allocated more per request than a write per line (BENCHMARKS.md, "Where a request's CPU
 * goes"). One per process: tests build many apps, and stdout is one.
 */
export function logDestination(): DestinationStream {
  stdout ??= pino.destination({ dest: 1, sync: true });
  return stdout;
}
