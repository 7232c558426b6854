// /readyz's answer, asked of the dependencies at most once a second (docs/rules.md#deployment).
import type { Clock } from '../clock.ts';
import type { Queryable } from '../db/database.ts';
import type { ReadinessCheck } from '../rate-limit/stores/store.ts';

/** How long one look at the dependencies answers every caller. */
export const READINESS_MAX_AGE_MS = 1000;

export interface Readiness {
  readonly fatal: boolean;
  readonly body: Readonly<Record<string, string>>;
}

/**
 * Readiness as of the last look, looked again once it is READINESS_MAX_AGE_MS old (by the clock).
 * /readyz is public and unlimited: without this, each caller would cost a query and a Redis PING.
 * Callers that come while a look is under way share it, so a flood costs one look a second.
 */
export class ReadinessState {
  private last: { readonly at: number; readonly readiness: Readiness } | null = null;
  private looking: Promise<Readiness> | null = null;
  private readonly db: Queryable;
  private readonly checks: readonly ReadinessCheck[];
  private readonly clock: Clock;

  constructor(db: Queryable, checks: readonly ReadinessCheck[], clock: Clock) {
    this.db = db;
    this.checks = checks;
    this.clock = clock;
  }

  current(): Readiness | Promise<Readiness> {
    if (this.last && this.clock.now() - this.last.at < READINESS_MAX_AGE_MS) return this.last.readiness;
    this.looking ??= this.look().finally(() => {
      this.looking = null;
    });
    return this.looking;
  }

  private async look(): Promise<Readiness> {
    const at = this.clock.now();
    const body: Record<string, string> = {};
    let fatal = false;
    try {
      await this.db.query('SELECT 1');
      body.database = 'up';
    } catch {
      body.database = 'down';
      fatal = true;
    }
    for (const check of this.checks) {
      const result = await check.check();
      body[check.name] = result.state;
      fatal ||= result.fatal;
    }
    const readiness = { fatal, body };
    this.last = { at, readiness };
    return readiness;
  }
}
