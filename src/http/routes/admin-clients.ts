// Clients, for admins (docs/rules.md#tasks): add one, rename one; names unique ignoring case.

import { CLIENT_NAME_MAX_LENGTH } from '../../domain.ts';
import { ApiError } from '../../errors.ts';
import { checkedName } from '../../tasks/task-rules.ts';
import { byIdParams, errorResponses, ref } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';

/** A name as sent: judged once trimmed (checkedName); the bound only keeps a huge one out. */
const nameBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: CLIENT_NAME_MAX_LENGTH * 4,
      description: `1 to ${CLIENT_NAME_MAX_LENGTH} characters once trimmed, unique ignoring case.`,
    },
  },
} as const;

const clientAnswer = {
  type: 'object',
  required: ['client'],
  additionalProperties: false,
  properties: { client: ref('Client') },
} as const;

export const adminClientRoutes: RoutesPlugin = async (app, { services }) => {
  const { tasks } = services;

  app.post<{ Body: { name: string } }>('/api/admin/clients', {
    config: { access: 'admin' },
    schema: {
      tags: ['admin'],
      summary: 'Add a client',
      body: nameBody,
      response: { 201: clientAnswer, ...errorResponses('CLIENT_NAME_TAKEN') },
    },
    handler: async (request, reply) => {
      const client = await tasks.addClient(checkedName('name', request.body.name, CLIENT_NAME_MAX_LENGTH));
      if (!client) throw new ApiError('CLIENT_NAME_TAKEN');
      return reply.code(201).send({ client });
    },
  });

  app.patch<{ Params: { id: number }; Body: { name: string } }>('/api/admin/clients/:id', {
    config: { access: 'admin' },
    schema: {
      tags: ['admin'],
      summary: 'Rename a client',
      params: byIdParams,
      body: nameBody,
      response: { 200: clientAnswer, ...errorResponses('NOT_FOUND', 'CLIENT_NAME_TAKEN') },
    },
    handler: async (request) => {
      const outcome = await tasks.renameClient(
        request.params.id,
        checkedName('name', request.body.name, CLIENT_NAME_MAX_LENGTH),
      );
      if (outcome === 'not-found')
        throw new ApiError('NOT_FOUND', {}, `Client ${request.params.id} does not exist.`);
      if (outcome === 'taken') throw new ApiError('CLIENT_NAME_TAKEN');
      return { client: outcome };
    },
  });
};
