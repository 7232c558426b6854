// Another account's passkeys, for admins (docs/rules.md#accounts): list them, remove one.
import { ApiError } from '../../errors.ts';
import { byIdParams, errorResponses, idSchema } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';
import { passkeySchema } from '../webauthn-schemas.ts';

const byUserAndPasskey = {
  type: 'object',
  required: ['id', 'passkeyId'],
  additionalProperties: false,
  properties: { id: idSchema, passkeyId: idSchema },
} as const;

export const adminPasskeyRoutes: RoutesPlugin = async (app, { services }) => {
  const { adminAccounts } = services;

  app.get<{ Params: { id: number } }>('/api/admin/users/:id/passkeys', {
    config: { access: 'admin' },
    schema: {
      tags: ['passkeys'],
      summary: "An account's passkeys, oldest first: name and times, never a key (admins only)",
      params: byIdParams,
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
      const passkeys = await adminAccounts.passkeys(request.params.id);
      if (!passkeys) throw new ApiError('NOT_FOUND');
      return { passkeys };
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
      const outcome = await adminAccounts.removePasskey(
        { id: admin.id, address: request.caller.ipKey() },
        id,
        passkeyId,
      );
      // Its admin rights may have gone while the request was on its way (another admin's edit).
      if (outcome === 'actor-not-admin') throw new ApiError('FORBIDDEN');
      if (outcome === 'no-such-passkey') throw new ApiError('NOT_FOUND');
      request.log.info({ userId: id, passkeyId, by: admin.id }, 'passkey removed by an admin');
      return reply.code(204).send();
    },
  });
};
