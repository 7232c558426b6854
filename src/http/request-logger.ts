// Each request's logger, made only when something logs through it.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

type LogArguments = Parameters<FastifyBaseLogger['info']>;

/**
 * Fastify gives every request a child of the app logger bound to its id: pino's `child`, which
 * serialises the bindings and copies the logger's state, on every request. The request line is
 * written without it (request-log.ts), so most requests never log through theirs. This stands in
 * for it and makes the very same child on the first line that goes through it: what is logged,
 * and how, does not change.
 */
export class DeferredChildLogger implements FastifyBaseLogger {
  private real: FastifyBaseLogger | null = null;
  private readonly parent: Pick<FastifyBaseLogger, 'child'>;
  private readonly childBindings: Bindings;
  private readonly childOptions: ChildLoggerOptions;

  constructor(parent: Pick<FastifyBaseLogger, 'child'>, bindings: Bindings, options: ChildLoggerOptions) {
    this.parent = parent;
    this.childBindings = bindings;
    this.childOptions = options;
  }

  /** The child pino would have made for the request, made now. */
  get logger(): FastifyBaseLogger {
    this.real ??= this.parent.child(this.childBindings, this.childOptions);
    return this.real;
  }

  get level(): LevelWithSilentOrString {
    return this.logger.level;
  }
  set level(level: LevelWithSilentOrString) {
    this.logger.level = level;
  }

  fatal(...args: LogArguments): void {
    this.logger.fatal(...args);
  }
  error(...args: LogArguments): void {
    this.logger.error(...args);
  }
  warn(...args: LogArguments): void {
    this.logger.warn(...args);
  }
  info(...args: LogArguments): void {
    this.logger.info(...args);
  }
  debug(...args: LogArguments): void {
    this.logger.debug(...args);
  }
  trace(...args: LogArguments): void {
    this.logger.trace(...args);
  }
  silent(...args: LogArguments): void {
    this.logger.silent(...args);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/**
 * Makes every request's logger (`request.log`) a DeferredChildLogger of the app's logger. Why
 * through the app logger's `child` and not Fastify's `childLoggerFactory` option: Fastify checks
 * what a factory of ours returns on every request (seven method lookups, an array and a filter,
 * about 0.1 µs) and skips that check only for its own factory, which calls `app.log.child`.
 * Every child of the app logger is deferred so: a plugin's, a route's (`logLevel`), a request's.
 */
export function deferChildLoggers(app: Pick<FastifyInstance, 'log'>): void {
  const log = app.log as FastifyBaseLogger;
  const parent = { child: log.child.bind(log) };
  log.child = (bindings, options) => new DeferredChildLogger(parent, bindings, options ?? {});
}
