// The database away (docs/rules.md#faults): the wait asked of clients, a log line per edge, metrics.
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../clock.ts';
import type { Availability } from '../../db/availability.ts';

export interface DatabaseOutageOptions {
  readonly availability: Availability;
  readonly clock: Clock;
}

/** Retry-After grows with the outage: 1 s at first, one more every RETRY_STEP_MS, at most MAX. */
const RETRY_STEP_MS = 5_000;
const MAX_RETRY_AFTER_SECONDS = 5;

/**
 * An outage as the HTTP layer sees it: the requests it refused, and the wait it asks of them. A
 * short restart is over within seconds, so the first clients come back after 1 s; a long one
 * spreads them out, up to 5 s.
 */
export class DatabaseOutage {
  /** Requests answered DATABASE_UNAVAILABLE since the process started. */
  refusedTotal = 0;
  private startedAt: number | null = null;
  private refused = 0;
  private readonly clock: Clock;
  private readonly log: FastifyBaseLogger;

  constructor(clock: Clock, log: FastifyBaseLogger) {
    this.clock = clock;
    this.log = log;
  }

  get up(): boolean {
    return this.startedAt === null;
  }

  outageStarted(error: unknown): void {
    this.startedAt = this.clock.now();
    this.refused = 0;
    this.log.error(
      { err: error },
      'database unavailable: requests that need it are answered 503 until it is back',
    );
  }

  outageEnded(): void {
    const durationMs = this.startedAt === null ? 0 : this.clock.now() - this.startedAt;
    this.log.warn(
      { durationMs, refusedRequests: this.refused },
      `database available again after ${(durationMs / 1000).toFixed(1)} s; ${this.refused} requests were answered 503`,
    );
    this.startedAt = null;
    this.refused = 0;
  }

  /** Counts a request refused for the outage; returns the seconds it should wait (Retry-After). */
  refuse(): number {
    this.refusedTotal++;
    this.refused++;
    const elapsed = this.startedAt === null ? 0 : this.clock.now() - this.startedAt;
    return Math.min(MAX_RETRY_AFTER_SECONDS, 1 + Math.floor(elapsed / RETRY_STEP_MS));
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    databaseOutage: DatabaseOutage;
  }
}

export const databaseOutagePlugin = fp<DatabaseOutageOptions>(
  async (app, { availability, clock }) => {
    const outage = new DatabaseOutage(clock, app.log);
    app.decorate('databaseOutage', outage);
    const stop = availability.observe(outage);
    app.addHook('onClose', async () => stop());
  },
  { name: 'database-outage' },
);

/** `database_up` and `database_unavailable_refusals_total`, read from `outage` at scrape time. */
export function registerDatabaseMetrics(registry: Registry, outage: DatabaseOutage): void {
  let reported = 0;
  new Counter({
    name: 'database_unavailable_refusals_total',
    help: 'Requests answered 503 DATABASE_UNAVAILABLE because the database could not be reached.',
    registers: [registry],
    collect() {
      this.inc(outage.refusedTotal - reported);
      reported = outage.refusedTotal;
    },
  });
  new Gauge({
    name: 'database_up',
    help: '1 while the database answers, 0 from a failed connection or statement until the next success.',
    registers: [registry],
    collect() {
      this.set(outage.up ? 1 : 0);
    },
  });
}
