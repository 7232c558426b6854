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

/** Lines wait in sonic-boom's buffer until this many bytes are pending (about 13 request lines)… */
export const LOG_BUFFER_BYTES = 4096;
/** …or until its flush timer runs, so a quiet service's lines are never held longer than this. */
export const LOG_FLUSH_INTERVAL_MS = 100;

let stdout: ReturnType<typeof pino.destination> | null = null;

/**
 * Where the JSON lines go: stdout through sonic-boom (pino.destination), with its documented
 * buffering (`minLength`, `periodicFlush`) and written synchronously. Why: pino's default stdout
 * writes every line as soon as no write is in flight, each on a libuv pool thread (a thread wake-up
 * and a futex per write, the pool shared with the password checks), and while one is in flight it
 * keeps appending lines to one string whose UTF-8 length it measures again on every line, so each
 * line copied the whole pending batch (about 7 KB allocated per request line, BENCHMARKS.md). Here
 * a batch is one write(2) of about 4 KB from the event loop; what is pending is written by the
 * flush timer, and at exit, a crash's included (`process.on('exit')` runs on an uncaught
 * exception and on process.exit; only SIGKILL loses the last lines). One per process: tests build
 * many apps, and stdout is one.
 */
export function logDestination(): DestinationStream {
  if (stdout) return stdout;
  const destination = pino.destination({
    dest: 1,
    sync: true,
    minLength: LOG_BUFFER_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
  });
  process.on('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // stdout is gone: nothing left to tell.
    }
  });
  stdout = destination;
  return destination;
}
