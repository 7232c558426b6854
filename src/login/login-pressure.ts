// Whether the login path is under pressure (docs/rules.md#the-login-gate): episodes of shedding.
import type { Clock } from '../clock.ts';
import type { SecurityEventSink } from '../security-event.ts';

/** Pressure ends once no attempt has been shed for this long. */
export const PRESSURE_QUIET_MS = 60_000;

/** The name the pressure's security events carry as their `control`. */
export const LOGIN_GATE_CONTROL = 'login-gate';

export interface PressureState {
  readonly underPressure: boolean;
  /** When the current episode started (epoch ms), or null. */
  readonly since: number | null;
  /** The last shed attempt (epoch ms), this episode or an earlier one; null if none yet. */
  readonly lastShedAt: number | null;
  /** Attempts shed in the current episode (0 when there is none). */
  readonly shedAttempts: number;
}

export interface LoginPressureOptions {
  readonly clock: Clock;
  /** Told `login-pressure-started` and `login-pressure-ended`: one pair per episode, never one event per attempt. */
  readonly events: SecurityEventSink;
  readonly quietMs?: number;
}

export class LoginPressure {
  private readonly clock: Clock;
  private readonly events: SecurityEventSink;
  private readonly quietMs: number;
  private since: number | null = null;
  private lastShedAt: number | null = null;
  private shedAttempts = 0;

  constructor(options: LoginPressureOptions) {
    this.clock = options.clock;
    this.events = options.events;
    this.quietMs = options.quietMs ?? PRESSURE_QUIET_MS;
  }

  /** An attempt was shed: the first one of an episode starts it. */
  shed(): void {
    const now = this.clock.now();
    this.poll(now);
    if (this.since === null) {
      this.since = now;
      this.shedAttempts = 0;
      this.events.record({ type: 'login-pressure-started', control: LOGIN_GATE_CONTROL });
    }
    this.lastShedAt = now;
    this.shedAttempts++;
  }

  /**
   * Ends the episode once a quiet minute has passed. Called on a timer, and before every read and
   * every shed, so the state read is never stale even between timer ticks.
   */
  poll(now = this.clock.now()): void {
    if (this.since === null || this.lastShedAt === null || now - this.lastShedAt < this.quietMs) return;
    this.since = null;
    this.shedAttempts = 0;
    this.events.record({ type: 'login-pressure-ended', control: LOGIN_GATE_CONTROL });
  }

  state(): PressureState {
    this.poll();
    return {
      underPressure: this.since !== null,
      since: this.since,
      lastShedAt: this.lastShedAt,
      shedAttempts: this.shedAttempts,
    };
  }
}
