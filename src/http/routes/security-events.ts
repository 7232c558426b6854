// Security events, newest first, by keyset pages: all for admins, one's own (docs/rules.md#accounts).
import { normaliseEmail } from '../../email.ts';
import {
  EVENT_WINDOW_MS,
  EVENTS_PER_WINDOW,
  SECURITY_EVENT_TYPES,
  SUMMARY_ADDRESSES,
} from '../../security-event.ts';
import { keysetCursor } from '../cursor.ts';
import type { RoutesPlugin } from '../services.ts';

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
    // A summary's only (docs/rules.md#events-about-one-account): repeats past the account's cap, counted.
    count: { type: 'integer', minimum: 1 },
    lastAt: { type: 'string', format: 'date-time' },
    addresses: { type: 'array', items: { type: 'string' } },
    moreAddresses: { type: 'boolean' },
  },
} as const;

const SUMMARY_ROWS =
  `Past ${EVENTS_PER_WINDOW} events about one account in a ${EVENT_WINDOW_MS / 60_000}-minute window, the ` +
  'repeats of a kind come as one summary row: `count` events, the first at `at`, the last at `lastAt`, ' +
  `from \`addresses\` (the first ${SUMMARY_ADDRESSES} distinct; \`moreAddresses\` when there were others). ` +
  'An event stored as its own row has none of these fields.';

/** An owner's own events come 50 a page (docs/rules.md#accounts). */
export const OWN_EVENTS_PAGE = 50;

const pageSchema = {
  type: 'object',
  required: ['events', 'nextCursor'],
  properties: {
    events: { type: 'array', items: eventSchema },
    nextCursor: { type: ['string', 'null'] },
  },
} as const;

export const securityEventRoutes: RoutesPlugin = async (app, { services }) => {
  const { securityEvents } = services;

  app.get<{ Querystring: { limit: number; cursor?: string } }>('/api/admin/security-events', {
    config: { access: 'admin' },
    schema: {
      tags: ['security events'],
      summary: 'Locks that started, admin resets and refused known devices, newest first (admins only)',
      description: SUMMARY_ROWS,
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: SECURITY_EVENTS_MAX_LIMIT, default: 50 },
          cursor: { type: 'string', maxLength: 64 },
        },
      },
      response: { 200: pageSchema },
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

  app.get<{ Querystring: { cursor?: string } }>('/api/auth/security-events', {
    config: { access: 'user' },
    schema: {
      tags: ['account'],
      summary:
        "Your own account's security events, newest first, 50 a page: sign-ins (from a new browser or a known one), " +
        'failed ones, locks, password changes, sessions ended, devices forgotten, passkeys, and what an admin changed',
      description: SUMMARY_ROWS,
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { cursor: { type: 'string', maxLength: 64 } },
      },
      response: { 200: pageSchema },
    },
    handler: async (request) => {
      const { cursor } = request.query;
      const position = cursor ? cursors.decode(cursor) : null;
      const rows = await securityEvents.newestFirstAbout(
        normaliseEmail(request.user!.email),
        OWN_EVENTS_PAGE + 1,
        position ? { atMs: position[0]!, id: position[1]! } : undefined,
      );
      const page = cursors.page(rows, OWN_EVENTS_PAGE, (event) => [Date.parse(event.at), event.id]);
      // What an admin did shows that an admin did it, not from where.
      const self = request.user!.id;
      const events = page.rows.map((event) =>
        event.actorId === null || event.actorId === self
          ? event
          : { ...event, address: null, ...(event.addresses && { addresses: [], moreAddresses: false }) },
      );
      return { events, nextCursor: page.nextCursor };
    },
  });
};
