// The caller's budgets, read without spending (contract §6), and the admin's login-lock reset.
import type { FastifyInstance } from 'fastify';
import { normaliseEmail } from '../../auth/email.ts';
import type { ControlName } from '../../rate-limit/policy.ts';
import { errorResponses } from '../schemas.ts';
import type { Services } from '../services.ts';

const reportSchema = {
  type: 'object',
  required: ['control', 'code', 'limit', 'windowSeconds', 'remaining', 'resetSeconds'],
  properties: {
    control: { type: 'string' },
    code: { type: 'string' },
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
    handler: async (request) => {
      const engine = app.rateLimit;
      const user = request.user;
      const applicable: [ControlName, string][] = user
        ? [
            ['task-bulk', engine.keyFor(engine.controls['task-bulk'], request.caller)],
            ['api-authenticated', engine.keyFor(engine.controls['api-authenticated'], request.caller)],
            ['login-account', normaliseEmail(user.email)],
            ['login-ip', request.caller.ipKey()],
          ]
        : [
            ['task-bulk', engine.keyFor(engine.controls['task-bulk'], request.caller)],
            ['api-unauthenticated', request.caller.ipKey()],
            ['login-ip', request.caller.ipKey()],
          ];
      const verdicts = await Promise.all(applicable.map(([name, key]) => engine.peek(name, key)));
      return { controls: verdicts.map((verdict) => engine.report(verdict)) };
    },
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
      const bound = app.rateLimit.controls['login-account'];
      await app.rateLimit.store.reset(bound.rule, normaliseEmail(request.body.email));
      request.log.info({ control: bound.control.name, by: request.user!.id }, 'login lock reset');
      return reply.code(204).send();
    },
  });
}
