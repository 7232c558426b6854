// People, for admins (docs/rules.md#accounts): list, add with a temporary password, edit, disable, reset.
import type { FastifyRequest } from 'fastify';
import type { ActingAdmin, EditRefusal } from '../../accounts/admin-accounts.ts';
import { ROLES, type Role } from '../../domain.ts';
import { isEmailAddress } from '../../email.ts';
import { ApiError } from '../../errors.ts';
import { byIdParams, errorResponses, userSchema } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';

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

export const adminUserRoutes: RoutesPlugin = async (app, { services }) => {
  const { adminAccounts } = services;
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
    handler: async () => ({ users: await adminAccounts.list() }),
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
      const added = await adminAccounts.add(acting(request), { email, name: name.trim(), role });
      if (added === 'email-taken') throw new ApiError('EMAIL_TAKEN');
      request.log.info({ userId: added.user.id, by: request.user!.id }, 'account added by an admin');
      return reply.code(201).send(added);
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
        params: byIdParams,
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
        const outcome = await adminAccounts.edit(acting(request), request.params.id, {
          name: name?.trim(),
          role,
          disabled,
        });
        if (typeof outcome === 'string') throw REFUSALS[outcome]();
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
      params: byIdParams,
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
      const outcome = await adminAccounts.reset(acting(request), id);
      if (typeof outcome === 'string') throw REFUSALS[outcome]();
      request.log.info({ userId: id, by: request.user!.id }, 'password reset by an admin');
      return outcome;
    },
  });
};
