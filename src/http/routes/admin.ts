// The admin's view of login locks (docs/rules.md#known-devices): what is locked now, and the unlock.
import type { FastifyInstance } from 'fastify';
import { normaliseEmail } from '../../email.ts';
import type { Lock } from '../../rate-limit/engine.ts';
import type { ControlName } from '../../rate-limit/policy.ts';
import type { Services } from '../services.ts';

/** The login controls whose locks are listed, and what each one's key is shown as. */
const LISTED: readonly { control: ControlName; keyAs: 'email' | 'address' | 'device' }[] = [
  { control: 'login-account', keyAs: 'email' },
  { control: 'login-ip', keyAs: 'address' },
  { control: 'login-device', keyAs: 'device' },
];

const lockSchema = {
  type: 'object',
  required: ['control', 'failures', 'retryAfter'],
  additionalProperties: false,
  properties: {
    control: { type: 'string' },
    email: { type: 'string' },
    address: { type: 'string' },
    device: { type: 'string' },
    failures: { type: 'integer' },
    retryAfter: { type: 'integer' },
  },
} as const;

export async function adminRoutes(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  const { rateLimit, securityEvents } = services;

  app.get('/api/admin/login-locks', {
    config: { access: 'admin' },
    schema: {
      tags: ['rate limits'],
      summary: 'Accounts, addresses and known devices a login control refuses now (admins only)',
      response: {
        200: {
          type: 'object',
          required: ['locks'],
          properties: { locks: { type: 'array', items: lockSchema } },
        },
      },
    },
    handler: async () => {
      const lists = await Promise.all(LISTED.map(({ control }) => rateLimit.lockedNow(control)));
      return {
        locks: lists.flatMap((locks, i) => locks.map((lock) => shown(lock, LISTED[i]!.keyAs))),
      };
    },
  });

  app.post<{ Body: { email: string } }>('/api/admin/login-locks/reset', {
    config: { access: 'admin' },
    schema: {
      tags: ['rate limits'],
      summary: "Clear an account's login-failure counter; its known devices stay known (admins only)",
      body: {
        type: 'object',
        required: ['email'],
        additionalProperties: false,
        properties: { email: { type: 'string', minLength: 1, maxLength: 254 } },
      },
      response: { 204: { type: 'null', description: 'The counters are cleared.' } },
    },
    handler: async (request, reply) => {
      const { email } = request.body;
      // The counters only: the account's known devices stay known. Revoking them would hand the
      // attacker whose guesses locked the account the owner's own browser: ten more guesses after
      // the reset would lock the owner out everywhere (docs/rules.md#known-devices).
      await rateLimit.resetAccount(email);
      const by = request.user!.id;
      securityEvents.record({
        type: 'admin-reset',
        control: 'login-account',
        email: normaliseEmail(email),
        actorId: by,
      });
      request.log.info({ control: 'login-account', by }, 'login lock reset');
      return reply.code(204).send();
    },
  });
}

function shown({ control, key, failures, retryAfter }: Lock, keyAs: 'email' | 'address' | 'device') {
  return { control, [keyAs]: key, failures, retryAfter };
}
