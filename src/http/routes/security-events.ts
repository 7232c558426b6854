// The admin's read of security events, newest first, one keyset page at a time (docs/rules.md#known-devices).
import type { FastifyInstance } from 'fastify';
import { SECURITY_EVENT_TYPES } from '../../security-event.ts';
import { keysetCursor } from '../cursor.ts';
import type { Services } from '../services.ts';

export const SECURITY_EVENTS_MAX_LIMIT = 200;

/** The last event of a page: its time in epoch milliseconds and its id. */
const cursors = keysetCursor('before', [8_640_000_000_000_000, Number.MAX_SAFE_INTEGER]);

const eventSchema = {
  type: 'object',
  required: ['id', 'at', 'type', 'control', 'email', 'address', 'instance', 'actorId'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    at: { type: 'string', format: 'date-time' },
    type: { type: 'string', enum: SECURITY_EVENT_TYPES },
    control: { type: 'string' },
    email: { type: ['string', 'null'] },
    address: { type: ['string', 'null'] },
    instance: { type: 'string' },
    actorId: { type: ['integer', 'null'] },
  },
} as const;

export async function securityEventRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const { securityEvents } = services;

  app.get<{ Querystring: { limit: number; cursor?: string } }>('/api/admin/security-events', {
    config: { access: 'admin' },
    schema: {
      tags: ['security events'],
      summary: 'Locks that started, admin resets and refused known devices, newest first (admins only)',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: SECURITY_EVENTS_MAX_LIMIT, default: 50 },
          cursor: { type: 'string', maxLength: 64 },
        },
      },
      response: {
        200: {
          type: 'object',
          required: ['events', 'nextCursor'],
          properties: {
            events: { type: 'array', items: eventSchema },
            nextCursor: { type: ['string', 'null'] },
          },
        },
      },
    },
    handler: async (request) => {
      const { limit, cursor } = request.query;
      const position = cursor ? cursors.decode(cursor) : null;
      const rows = await securityEvents.newestFirst(
        limit + 1,
        position ? { atMs: position[0]!, id: position[1]! } : undefined,
      );
      const page = cursors.page(rows, limit, (event) => [Date.parse(event.at), event.id]);
      return { events: page.rows, nextCursor: page.nextCursor };
    },
  });
}
