// The service's pino settings: JSON lines in production and pipes, readable lines in a development terminal.
import { createRequire } from 'node:module';
import type { LoggerOptions } from 'pino';

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
