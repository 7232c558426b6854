// The admin's view of the login path under a flood (contract §11): whether this instance sheds attempts, and its gate's queues.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';

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

const count = { type: 'integer', minimum: 0 } as const;

const reportSchema = {
  type: 'object',
  required: ['underPressure', 'since', 'lastShedAt', 'shedAttempts', 'instance', 'gate'],
  additionalProperties: false,
  properties: {
    underPressure: { type: 'boolean' },
    since: { type: ['string', 'null'], format: 'date-time' },
    lastShedAt: { type: ['string', 'null'], format: 'date-time' },
    shedAttempts: count,
    instance: { type: 'string' },
    gate: {
      type: 'object',
      required: ['concurrency', 'running', 'queued', 'checkMs', 'maxWaitMs'],
      additionalProperties: false,
      properties: {
        concurrency: count,
        running: count,
        queued: {
          type: 'object',
          required: ['known', 'shared'],
          additionalProperties: false,
          properties: { known: count, shared: count },
        },
        checkMs: { type: 'number', minimum: 0 },
        maxWaitMs: count,
      },
    },
  },
} as const;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function loginPressureRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const { loginGate, loginPressure, config } = services;

  app.get('/api/admin/login-pressure', {
    config: { access: 'admin' },
    schema: {
      tags: ['rate limits'],
      summary:
        "Whether this instance's login path is shedding attempts, and its hashing gate's queues (admins only)",
      response: { 200: reportSchema },
    },
    handler: async (): Promise<LoginPressureReport> => {
      const pressure = loginPressure.state();
      const gate = loginGate.state();
      return {
        underPressure: pressure.underPressure,
        since: iso(pressure.since),
        lastShedAt: iso(pressure.lastShedAt),
        shedAttempts: pressure.shedAttempts,
        instance: config.instanceId,
        gate: {
          concurrency: gate.concurrency,
          running: gate.running,
          queued: { ...gate.queued },
          checkMs: Math.round(gate.checkMs * 10) / 10,
          maxWaitMs: config.loginGate.maxWaitMs,
        },
      };
    },
  });
}
