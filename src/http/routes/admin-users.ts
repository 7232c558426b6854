// People, for admins (docs/rules.md#accounts): list, add with a temporary password, edit, disable, reset.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ActingAdmin, type EditRefusal, People } from '../../auth/people.ts';
import { generatePassword } from '../../auth/temporary-passwords.ts';
import { AdminUsersRepository } from '../../db/repositories/admin-users.ts';
import { ROLES, type Role } from '../../db/repositories/users.ts';
import { isEmailAddress } from '../../email.ts';
import { ApiError } from '../../errors.ts';
import { errorResponses, idSchema, userSchema } from '../schemas.ts';
import type { Services } from '../services.ts';

const NAME_MAX = 200;

/** AdminUser: the User, and what the People page shows besides. */
const adminUserSchema = {
  type: 'object',
  required: [...userSchema.required, 'disabled', 'createdAt', 'lastSignInAt'],
  additionalProperties: false,
  properties: {
    ...userSchema.properties,
    disabled: { type: 'boolean', description: 'True when it may not sign in by any means.' },
    createdAt: { type: 'string', format: 'date-time' },
    lastSignInAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'The last sign-in, or null.',
    },
  },
} as const;

const temporaryPassword = {
  type: 'string',
  description:
    'Shown this once: a random password (29 characters) that signs in for 7 days and must be changed at the first sign-in.',
} as const;

/** A name a person reads: 1 to 200 characters, not only spaces. */
const nameSchema = { type: 'string', minLength: 1, maxLength: NAME_MAX, pattern: '\\S' } as const;
const roleSchema = { type: 'string', enum: ROLES } as const;

const byId = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: idSchema },
} as const;

/** What each refused edit answers. */
const REFUSALS: Readonly<Record<EditRefusal, () => ApiError>> = {
  'no-such-account': () => new ApiError('NOT_FOUND'),
  // Its admin rights went while the request was on its way (another admin's edit).
  'actor-not-admin': () => new ApiError('FORBIDDEN'),
  self: () =>
    new ApiError(
      'LAST_ADMIN',
      {},
      'You cannot disable or demote your own account: another admin must do it.',
    ),
  'last-admin': () => new ApiError('LAST_ADMIN'),
};

export async function adminUserRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const { db, clock, config, passwords, sessions } = services;
  const people = new People(db, { clock, instance: config.instanceId });
  const accounts = new AdminUsersRepository(db);
  const acting = (request: FastifyRequest): ActingAdmin => ({
    id: request.user!.id,
    address: request.caller.ipKey(),
  });

  app.get('/api/admin/users', {
    config: { access: 'admin' },
    schema: {
      tags: ['people'],
      summary:
        'Every account, by id, with whether it is disabled, its last sign-in and a pending password change (admins only)',
      response: {
        200: {
          type: 'object',
          required: ['users'],
          additionalProperties: false,
          properties: { users: { type: 'array', items: adminUserSchema } },
        },
      },
    },
    handler: async () => ({ users: await accounts.list() }),
  });

  app.post<{ Body: { email: string; name: string; role: Role } }>('/api/admin/users', {
    config: { access: 'admin' },
    schema: {
      tags: ['people'],
      summary: 'Add an account with a temporary password, shown once in the answer (admins only)',
      body: {
        type: 'object',
        required: ['email', 'name', 'role'],
        additionalProperties: false,
        properties: {
          email: { type: 'string', minLength: 3, maxLength: 254 },
          name: nameSchema,
          role: roleSchema,
        },
      },
      response: {
        201: {
          type: 'object',
          required: ['user', 'temporaryPassword'],
          additionalProperties: false,
          properties: { user: adminUserSchema, temporaryPassword },
        },
        ...errorResponses('EMAIL_TAKEN'),
      },
    },
    handler: async (request, reply) => {
      const { email, name, role } = request.body;
      if (!isEmailAddress(email))
        throw new ApiError('VALIDATION_ERROR', {
          errors: [{ path: '/email', message: 'must be an email address' }],
        });
      const password = generatePassword();
      const user = await people.add(
        acting(request),
        { email, name: name.trim(), role },
        await passwords.rehash(password),
      );
      if (!user) throw new ApiError('EMAIL_TAKEN');
      request.log.info({ userId: user.id, by: request.user!.id }, 'account added by an admin');
      return reply.code(201).send({ user, temporaryPassword: password });
    },
  });

  app.patch<{ Params: { id: number }; Body: { name?: string; role?: Role; disabled?: boolean } }>(
    '/api/admin/users/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['people'],
        summary:
          'Rename an account, change its role, disable it (its sessions and known devices end at once) or enable it; ' +
          'no admin may disable or demote their own account or the last enabled admin (admins only)',
        params: byId,
        body: {
          type: 'object',
          minProperties: 1,
          additionalProperties: false,
          properties: { name: nameSchema, role: roleSchema, disabled: { type: 'boolean' } },
        },
        response: {
          200: {
            type: 'object',
            required: ['user'],
            additionalProperties: false,
            properties: { user: adminUserSchema },
          },
          ...errorResponses('NOT_FOUND', 'LAST_ADMIN', 'FORBIDDEN'),
        },
      },
      handler: async (request) => {
        const { name, role, disabled } = request.body;
        const outcome = await people.edit(acting(request), request.params.id, {
          name: name?.trim(),
          role,
          disabled,
        });
        if (typeof outcome === 'string') throw REFUSALS[outcome]();
        // This instance at once; the others when the change is announced (at the commit).
        sessions.forgetUser(outcome.id);
        return { user: outcome };
      },
    },
  );

  app.post<{ Params: { id: number } }>('/api/admin/users/:id/password-reset', {
    config: { access: 'admin' },
    schema: {
      tags: ['people'],
      summary:
        'Give an account a new temporary password, shown once; its sessions end and its known devices are forgotten (admins only)',
      params: byId,
      response: {
        200: {
          type: 'object',
          required: ['temporaryPassword'],
          additionalProperties: false,
          properties: { temporaryPassword },
        },
        ...errorResponses('NOT_FOUND'),
      },
    },
    handler: async (request) => {
      const { id } = request.params;
      const password = generatePassword();
      const outcome = await people.reset(acting(request), id, await passwords.rehash(password));
      if (outcome !== true) throw REFUSALS[outcome]();
      sessions.forgetUser(id);
      request.log.info({ userId: id, by: request.user!.id }, 'password reset by an admin');
      return { temporaryPassword: password };
    },
  });
}
