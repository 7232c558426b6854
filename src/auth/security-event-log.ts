// The security-event log: records without blocking (batched writes), reads newest first, purges by age.
import type { Clock } from '../clock.ts';
import {
  EVENT_WINDOWS_KEPT_MS,
  type NewSecurityEvent,
  type SecurityEventPosition,
  type SecurityEventsRepository,
  type StoredSecurityEvent,
} from '../db/repositories/security-events.ts';
import type { SecurityEvent, SecurityEventSink } from '../security-event.ts';

/** How often expired events are purged: an hour's lag on a 90-day retention is plenty. */
export const SECURITY_EVENT_PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** One insert statement carries at most this many events. */
const MAX_BATCH = 500;
/**
 * Events waiting for the database beyond this are dropped (and the drop is reported): a database
 * outage during a lock storm must not grow the process without bound.
 */
const MAX_PENDING = 10_000;

export interface SecurityEventLogOptions {
  readonly repository: SecurityEventsRepository;
  readonly clock: Clock;
  /** Names the instance that saw the event (config.instanceId). */
  readonly instance: string;
  /** Events older than this are purged by purgeExpired(). */
  readonly retentionMs: number;
  /** Told about writes that failed or events that were dropped; the reporter never hears of them. */
  readonly onError: (error: unknown, lostEvents: number) => void;
}

export class SecurityEventLog implements SecurityEventSink {
  private readonly options: SecurityEventLogOptions;
  private pending: NewSecurityEvent[] = [];
  private dropped = 0;
  /** The drain in progress, if any; new events join it. */
  private writing: Promise<void> | null = null;

  constructor(options: SecurityEventLogOptions) {
    this.options = options;
  }

  /**
   * Stamps the event with the time and the instance and queues it. Returns at once and never
   * throws: events reported in the same turn of the event loop go to the database in one insert.
   */
  record(event: SecurityEvent): void {
    try {
      if (this.pending.length >= MAX_PENDING) {
        this.dropped++;
      } else {
        this.pending.push({
          at: this.options.clock.now(),
          type: event.type,
          control: event.control,
          email: event.email ?? null,
          address: event.address ?? null,
          instance: this.options.instance,
          actorId: event.actorId ?? null,
        });
      }
      this.writing ??= this.drain();
    } catch (error) {
      this.report(error, 1);
    }
  }

  /** Resolves once every event recorded so far has been written (or given up on). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Up to `limit` stored events, newest first, older than `before`; this instance's own are written first. */
  async newestFirst(limit: number, before?: SecurityEventPosition): Promise<StoredSecurityEvent[]> {
    await this.flush();
    return this.options.repository.newestFirst(limit, before);
  }

  /** The same, of the events about one account (`email` in its normal form) only. */
  async newestFirstAbout(
    email: string,
    limit: number,
    before?: SecurityEventPosition,
  ): Promise<StoredSecurityEvent[]> {
    await this.flush();
    return this.options.repository.newestFirstAbout(email, limit, before);
  }

  /** Deletes the events older than the retention, and the cap's windows long over; answers how many events went. */
  async purgeExpired(): Promise<number> {
    const now = this.options.clock.now();
    const events = await this.options.repository.deleteBefore(now - this.options.retentionMs);
    await this.options.repository.deleteWindowsBefore(now - EVENT_WINDOWS_KEPT_MS);
    return events;
  }

  private async drain(): Promise<void> {
    try {
      // Let the rest of this turn (a burst of refusals, say) join the first batch.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.pending.length > 0 || this.dropped > 0) {
        if (this.dropped > 0) {
          this.report(new Error('security event queue full'), this.dropped);
          this.dropped = 0;
        }
        const batch = this.pending.splice(0, MAX_BATCH);
        try {
          await this.options.repository.insert(batch);
        } catch (error) {
          this.report(error, batch.length);
        }
      }
    } finally {
      this.writing = null;
    }
  }

  private report(error: unknown, lostEvents: number): void {
    try {
      this.options.onError(error, lostEvents);
    } catch {
      // A failing logger must not reach the request either.
    }
  }
}
