// One's sessions and known devices (docs/rules.md#accounts): list them, end or forget them.
import type { FastifyRequest } from 'fastify';
import type { Owner } from '../../accounts/own-account.ts';
import { ApiError } from '../../errors.ts';
import { setCookieHeader } from '../openapi-answers.ts';
import { byIdParams, errorResponses } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';
import { clearSessionCookie, SESSION_COOKIE } from '../session-cookie.ts';

const timestamp = { type: 'string', format: 'date-time' } as const;
const userAgent = {
  type: ['string', 'null'],
  description: 'The User-Agent the browser sent (at most 256 characters), or null.',
} as const;

const sessionSchema = {
  type: 'object',
  required: ['id', 'current', 'createdAt', 'lastSeenAt', 'userAgent'],
  additionalProperties: false,
  properties: {
    id: {
      type: 'string',
      description: 'The public id of the session: not its cookie, and nothing a cookie can be made from.',
    },
    current: { type: 'boolean', description: 'True for the session of this very request.' },
    createdAt: timestamp,
    lastSeenAt: { ...timestamp, description: 'Its last use; up to a minute behind.' },
    userAgent,
  },
} as const;

const deviceSchema = {
  type: 'object',
  required: ['id', 'createdAt', 'lastUsedAt', 'userAgent'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    createdAt: { ...timestamp, description: 'The first sign-in from this browser.' },
    lastUsedAt: { ...timestamp, description: 'The last sign-in from it.' },
    userAgent,
  },
} as const;

/** A session's public id: a UUID (anything else names no session, and never reaches the database). */
const sessionIdParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' },
  },
} as const;

export const accountSessionRoutes: RoutesPlugin = async (app, { services }) => {
  const { ownAccount, config } = services;
  /** The signed-in caller as the events of their changes name them. */
  const owner = (request: FastifyRequest): Owner => ({
    user: request.user!,
    address: request.caller.ipKey(),
  });

  app.get('/api/auth/sessions', {
    config: { access: 'user' },
    schema: {
      tags: ['account'],
      summary: 'Where you are signed in: your live sessions, the most recently used first',
      response: {
        200: {
          type: 'object',
          required: ['sessions'],
          additionalProperties: false,
          properties: { sessions: { type: 'array', items: sessionSchema } },
        },
      },
    },
    handler: async (request) => ({
      sessions: await ownAccount.sessions(request.user!.id, request.sessionPublicId),
    }),
  });

  app.delete<{ Params: { id: string } }>('/api/auth/sessions/:id', {
    config: { access: 'user' },
    schema: {
      tags: ['account'],
      summary:
        'Sign out one of your sessions, on every instance at once; your own current one signs you out ' +
        '(404 for a session that ended already, or is not yours)',
      params: sessionIdParams,
      response: {
        204: {
          type: 'null',
          description: 'Ended.',
          headers: {
            'Set-Cookie': setCookieHeader(
              `${SESSION_COOKIE}, cleared when the session ended was this one.`,
              false,
            ),
          },
        },
        ...errorResponses('NOT_FOUND'),
      },
    },
    handler: async (request, reply) => {
      if (!(await ownAccount.endSession(owner(request), request.params.id)))
        throw new ApiError('NOT_FOUND', {}, 'This session has ended already (or is not one of yours).');
      // Ending the current session is signing out: its cookie goes too.
      if (request.params.id === request.sessionPublicId) clearSessionCookie(reply, config);
      return reply.code(204).send();
    },
  });

  app.post('/api/auth/sessions/end-others', {
    config: { access: 'user' },
    schema: {
      tags: ['account'],
      summary:
        'Sign out everywhere else: every session of yours but this one ends, on every instance at once',
      response: {
        200: {
          type: 'object',
          required: ['ended'],
          additionalProperties: false,
          properties: { ended: { type: 'integer', minimum: 0, description: 'How many sessions ended.' } },
        },
      },
    },
    handler: async (request) => ({
      ended: await ownAccount.endOtherSessions(owner(request), request.sessionId!),
    }),
  });

  app.get('/api/auth/devices', {
    config: { access: 'user' },
    schema: {
      tags: ['account'],
      summary:
        'Your known devices: the browsers you signed in from, which a lock of your account for unknown devices spares',
      response: {
        200: {
          type: 'object',
          required: ['devices'],
          additionalProperties: false,
          properties: { devices: { type: 'array', items: deviceSchema } },
        },
      },
    },
    handler: async (request) => ({ devices: await ownAccount.devices(request.user!.id) }),
  });

  app.delete<{ Params: { id: number } }>('/api/auth/devices/:id', {
    config: { access: 'user' },
    schema: {
      tags: ['account'],
      summary:
        'Forget a known device: that browser signs in as an unknown one from now on (404 if not yours)',
      params: byIdParams,
      response: { 204: { type: 'null', description: 'Forgotten.' }, ...errorResponses('NOT_FOUND') },
    },
    handler: async (request, reply) => {
      if (!(await ownAccount.forgetDevice(owner(request), request.params.id)))
        throw new ApiError('NOT_FOUND', {}, 'This device is forgotten already (or is not one of yours).');
      return reply.code(204).send();
    },
  });
};
