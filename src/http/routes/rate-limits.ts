// The caller's budgets, read without spending (docs/rules.md#reading-the-budgets).
import { DEVICE_COOKIE } from '../../auth/devices.ts';
import { callerWith } from '../../rate-limit/policy.ts';
import { errorResponses, listAnswer } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';

const reportSchema = {
  type: 'object',
  required: ['control', 'code', 'mode', 'limit', 'windowSeconds', 'remaining', 'resetSeconds'],
  properties: {
    control: { type: 'string' },
    code: { type: 'string' },
    mode: { type: 'string', enum: ['enforce', 'shadow'] },
    limit: { type: 'integer' },
    windowSeconds: { type: 'integer' },
    remaining: { type: 'integer' },
    resetSeconds: { type: 'integer' },
  },
} as const;

export const rateLimitRoutes: RoutesPlugin = async (app, { services }) => {
  const { login } = services;

  app.get('/api/rate-limits', {
    schema: {
      tags: ['rate limits'],
      summary: "The caller's state under every control that applies to it; spends nothing",
      response: {
        200: listAnswer('controls', reportSchema),
        // It reads the store: RATE_LIMIT_STORE_FAILURE=closed answers 503 while the store is away.
        ...errorResponses('RATE_LIMIT_STORE_UNAVAILABLE'),
      },
    },
    handler: async (request) => {
      // The device's own budget too, when a sign-in from this cookie would be a known-device attempt.
      const deviceId = await login.knownDeviceId(request.cookies[DEVICE_COOKIE]);
      const caller = callerWith(request.caller, { deviceId });
      return { controls: await app.rateLimit.reportFor(caller) };
    },
  });
};
