// Each request's logger, made only when something logs through it.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
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
  private readonly parent: FastifyBaseLogger;
  private readonly childBindings: Bindings;
  private readonly childOptions: ChildLoggerOptions;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
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

/** Fastify's `childLoggerFactory`: each request's logger is a DeferredChildLogger. */
export const deferredChildLoggers: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => new DeferredChildLogger(logger, bindings, options);
