// Whether PostgreSQL can be reached: which errors mean "away" (not "wrong"), when an outage starts and ends.

/**
 * Thrown in place of a driver error that says the database is away (refused, reset, terminated,
 * timed out), never for a query the database refused. The HTTP layer answers it with a 503.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the database cannot be reached', { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/** Socket errors of the connection to the server (Node's codes). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is going, gone or not yet there: admin_shutdown (57P01, a fast
 * stop), crash_shutdown (57P02), cannot_connect_now (57P03, starting up), query_canceled (57014:
 * statement_timeout, the only cancel this service sends) and too_many_connections (53300).
 * Class 08, connection exceptions, is matched by its prefix.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '53300']);

/**
 * What `pg` and `pg-pool` say when a connection breaks or never comes: they throw plain Errors
 * without a code for these.
 */
const DRIVER_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable)/;

/** Whether `error` says the database cannot be reached now (so asking again later may work). */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (SOCKET_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))
  )
    return true;
  if (error instanceof AggregateError) return error.errors.some(isUnavailable); // every address refused
  return DRIVER_MESSAGES.test(error.message);
}

/**
 * Whether `error` is a statement the server cancelled past its statement_timeout (57014
 * query_canceled: the only cancel this service sends). The request is answered as if the
 * database were away (503), but the server answered, on a connection that still works: no outage.
 */
export function isStatementTimeout(error: unknown): boolean {
  return error instanceof Error && (error as Error & { code?: unknown }).code === '57014';
}

/** Told when the database goes away (the first failure) and comes back (the first success after). */
export interface AvailabilityObserver {
  outageStarted(error: unknown): void;
  outageEnded(): void;
}

/**
 * The database's reachability as its queries show it; observers hear only the transitions. Only
 * what started after the last transition can make the next one: a query (or a connection) that
 * was already under way when a restart began may still succeed, and one from before the database
 * came back may still fail (a connection the restart ended, a connect that waited through it);
 * neither proves anything about the database now.
 */
export class Availability {
  private down = false;
  /**
   * Whether the outage ends sessions (a shutdown, a refused or broken connection: anything but
   * too_many_connections): then a connection made before it began may still answer for a moment
   * (a fast shutdown ends the backends one by one) and proves nothing by succeeding.
   */
  private sessionsEnded = false;
  /** Counts transitions (an outage's start, its end); what starts notes it (`since`) and hands it back. */
  private transitions = 0;
  private readonly observers = new Set<AvailabilityObserver>();

  get available(): boolean {
    return !this.down;
  }

  /** Whether only a connection made since the outage began can end it (see `sessionsEnded`). */
  get awaitsNewConnection(): boolean {
    return this.down && this.sessionsEnded;
  }

  /** A mark to take when a query or a connection starts, for `failed` and `succeeded`. */
  get since(): number {
    return this.transitions;
  }

  /** Starts telling `observer` of outages; returns the function that stops it. */
  observe(observer: AvailabilityObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** Something that started at `since` found the database away. */
  failed(error: unknown, since: number = this.transitions): void {
    if (this.down || since !== this.transitions) return;
    this.down = true;
    this.sessionsEnded = (error as { code?: unknown } | null)?.code !== '53300';
    this.transitions++;
    for (const observer of this.observers) observer.outageStarted(error);
  }

  /** A query that started at `since` succeeded, on a connection made at `connectedSince`. */
  succeeded(since: number = this.transitions, connectedSince: number = since): void {
    if (!this.down || since !== this.transitions) return;
    if (this.sessionsEnded && connectedSince !== this.transitions) return;
    this.down = false;
    this.transitions++;
    for (const observer of this.observers) observer.outageEnded();
  }
}
