// Whether this instance sheds sign-ins, and its gate's queues, for admins (docs/rules.md#the-login-gate).
import type { LoginPressureReport } from '../../login/pressure-report.ts';
import type { RoutesPlugin } from '../services.ts';

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

export const loginPressureRoutes: RoutesPlugin = async (app, { services }) => {
  const { login } = services;

  app.get('/api/admin/login-pressure', {
    config: { access: 'admin' },
    schema: {
      tags: ['rate limits'],
      summary:
        "Whether this instance's login path is shedding attempts, and its hashing gate's queues (admins only)",
      response: { 200: reportSchema },
    },
    handler: async (): Promise<LoginPressureReport> => login.report(),
  });
};
