// The admin's view of login locks (docs/rules.md#known-devices): what is locked now, and the unlock.
import type { Lock } from '../../rate-limit/engine.ts';
import type { ControlName } from '../../rate-limit/policy.ts';
import { listAnswer } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';

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

export const adminRoutes: RoutesPlugin = async (app, { services }) => {
  const { rateLimit, login } = services;

  app.get('/api/admin/login-locks', {
    config: { access: 'admin' },
    schema: {
      tags: ['rate limits'],
      summary: 'Accounts, addresses and known devices a login control refuses now (admins only)',
      response: {
        200: listAnswer('locks', lockSchema),
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
      const by = request.user!.id;
      // The counters only: the account's known devices stay known (docs/rules.md#known-devices).
      await login.resetAccountLock(request.body.email, by);
      request.log.info({ control: 'login-account', by }, 'login lock reset');
      return reply.code(204).send();
    },
  });
};

function shown({ control, key, failures, retryAfter }: Lock, keyAs: 'email' | 'address' | 'device') {
  return { control, [keyAs]: key, failures, retryAfter };
}
