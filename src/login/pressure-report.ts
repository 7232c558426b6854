// The admin's view of the login path under a flood (docs/rules.md#the-login-gate).
import type { LoginGate } from './login-gate.ts';
import type { LoginPressure } from './login-pressure.ts';

/** GET /api/admin/login-pressure, as the server writes it (the client keeps a copy, checked by a test). */
export interface LoginPressureReport {
  /** True from the first attempt shed until a minute passes without one. */
  underPressure: boolean;
  /** When the current episode started (ISO-8601), or null. */
  since: string | null;
  /** The last attempt shed (ISO-8601), in this episode or an earlier one; null if none since the start. */
  lastShedAt: string | null;
  /** Attempts shed in the current episode. */
  shedAttempts: number;
  /** The instance that answers: the gate guards each instance's own CPUs. */
  instance: string;
  gate: {
    concurrency: number;
    running: number;
    queued: { known: number; shared: number };
    /** The measured duration of one check (ms) the gate estimates waits with. */
    checkMs: number;
    /** LOGIN_QUEUE_MAX_WAIT in milliseconds. */
    maxWaitMs: number;
  };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The report now, from the pressure episode and the gate's state. */
export function pressureReport(
  pressure: LoginPressure,
  gate: LoginGate,
  about: { readonly instance: string; readonly maxWaitMs: number },
): LoginPressureReport {
  const episode = pressure.state();
  const state = gate.state();
  return {
    underPressure: episode.underPressure,
    since: iso(episode.since),
    lastShedAt: iso(episode.lastShedAt),
    shedAttempts: episode.shedAttempts,
    instance: about.instance,
    gate: {
      concurrency: state.concurrency,
      running: state.running,
      queued: { ...state.queued },
      checkMs: Math.round(state.checkMs * 10) / 10,
      maxWaitMs: about.maxWaitMs,
    },
  };
}
