// The caller's budgets, read without spending (contract §6), and the admin's login-lock reset.
import type { FastifyInstance } from 'fastify';
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

export async function rateLimitRoutes(app: FastifyInstance, _options: { services: Services }): Promise<void> {
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
      },
    },
    handler: async (request) => ({ controls: await app.rateLimit.reportFor(request.caller) }),
  });

  app.post<{ Body: { email: string } }>('/api/admin/login-locks/reset', {
    config: { access: 'admin' },
    schema: {
      tags: ['rate limits'],
      summary: "Clear an account's login-failure counter (admins only)",
      body: {
        type: 'object',
        required: ['email'],
        additionalProperties: false,
        properties: { email: { type: 'string', minLength: 1, maxLength: 254 } },
      },
      response: { 204: { type: 'null' }, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request, reply) => {
      await app.rateLimit.resetAccount(request.body.email);
      request.log.info({ control: 'login-account', by: request.user!.id }, 'login lock reset');
      return reply.code(204).send();
    },
  });
}
