// The caller's budgets, read without spending (docs/rules.md#reading-the-budgets).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEVICE_COOKIE, DeviceCookies } from '../../auth/devices.ts';
import { callerWith } from '../../rate-limit/policy.ts';
import { errorResponses } from '../schemas.ts';
import type { Services } from '../services.ts';

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

export async function rateLimitRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const { devices, users } = services;

  /** The device id of the cookie when a sign-in to its account would be a known-device attempt; else null. */
  const knownDevice = async (request: FastifyRequest): Promise<string | null> => {
    const claim = devices.read(request.cookies[DEVICE_COOKIE]);
    if (!claim) return null;
    const standing = await users.deviceStanding(claim.userId, claim);
    return standing && DeviceCookies.known(claim, { ...standing, userId: claim.userId })
      ? claim.deviceId
      : null;
  };

  app.get('/api/rate-limits', {
    schema: {
      tags: ['rate limits'],
      summary: "The caller's state under every control that applies to it; spends nothing",
      response: {
        200: {
          type: 'object',
          required: ['controls'],
          properties: { controls: { type: 'array', items: reportSchema } },
        },
        // It reads the store: RATE_LIMIT_STORE_FAILURE=closed answers 503 while the store is away.
        ...errorResponses('RATE_LIMIT_STORE_UNAVAILABLE'),
      },
    },
    handler: async (request) => {
      const caller = callerWith(request.caller, { deviceId: await knownDevice(request) });
      return { controls: await app.rateLimit.reportFor(caller) };
    },
  });
}
