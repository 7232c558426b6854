// Another account's passkeys, for admins (docs/rules.md#accounts): list them, remove one.
import type { FastifyInstance } from 'fastify';
import { removePasskeys } from '../../auth/accounts.ts';
import { inTransaction } from '../../db/database.ts';
import { AdminUsersRepository } from '../../db/repositories/admin-users.ts';
import { UsersRepository } from '../../db/repositories/users.ts';
import { ApiError } from '../../errors.ts';
import { errorResponses, idSchema } from '../schemas.ts';
import type { Services } from '../services.ts';
import { passkeySchema } from '../webauthn-schemas.ts';

const byUser = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: idSchema },
} as const;

const byUserAndPasskey = {
  type: 'object',
  required: ['id', 'passkeyId'],
  additionalProperties: false,
  properties: { id: idSchema, passkeyId: idSchema },
} as const;

export async function adminPasskeyRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const { db, users, passkeys, clock, config } = services;

  app.get<{ Params: { id: number } }>('/api/admin/users/:id/passkeys', {
    config: { access: 'admin' },
    schema: {
      tags: ['passkeys'],
      summary: "An account's passkeys, oldest first: name and times, never a key (admins only)",
      params: byUser,
      response: {
        200: {
          type: 'object',
          required: ['passkeys'],
          additionalProperties: false,
          properties: { passkeys: { type: 'array', items: passkeySchema } },
        },
        ...errorResponses('NOT_FOUND'),
      },
    },
    handler: async (request) => {
      const user = await users.findById(request.params.id);
      if (!user) throw new ApiError('NOT_FOUND');
      return { passkeys: await passkeys.list(user.id) };
    },
  });

  app.delete<{ Params: { id: number; passkeyId: number } }>('/api/admin/users/:id/passkeys/:passkeyId', {
    config: { access: 'admin' },
    schema: {
      tags: ['passkeys'],
      summary:
        "Remove one of an account's passkeys: it signs no one in from now on (admins only; 404 for " +
        'an unknown account or a passkey of another)',
      params: byUserAndPasskey,
      response: { 204: { type: 'null', description: 'Removed.' }, ...errorResponses('NOT_FOUND') },
    },
    handler: async (request, reply) => {
      const { id, passkeyId } = request.params;
      const admin = request.user!;
      // The removal and its security event (naming the admin) in one transaction.
      const removed = await db.withConnection((connection) =>
        inTransaction(connection, async () => {
          // Its admin rights may have gone while the request was on its way (another admin's edit).
          if (!(await new AdminUsersRepository(connection).actorStillAdmin(admin.id))) return null;
          const user = await new UsersRepository(connection).findById(id);
          if (!user) return [];
          return removePasskeys(
            connection,
            user,
            {
              at: clock.now(),
              instance: config.instanceId,
              control: 'passkey',
              actorId: admin.id,
              address: request.caller.ipKey(),
            },
            passkeyId,
          );
        }),
      );
      if (removed === null) throw new ApiError('FORBIDDEN');
      if (removed.length === 0) throw new ApiError('NOT_FOUND');
      request.log.info({ userId: id, passkeyId, by: admin.id }, 'passkey removed by an admin');
      return reply.code(204).send();
    },
  });
}
