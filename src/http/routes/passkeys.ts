// A signed-in user's passkeys (docs/rules.md#passkeys): list, register, rename, remove.
import type { FastifyRequest } from 'fastify';
import type { PasskeyOwner, RegistrationRefusal } from '../../accounts/own-passkeys.ts';
import type { RegistrationResponseJSON } from '../../auth/passkeys.ts';
import { ApiError } from '../../errors.ts';
import { PASSKEYS_MAX } from '../../limits.ts';
import { sendLoginBusy } from '../login-busy.ts';
import { relyingPartyOf } from '../origin.ts';
import { byIdParams, errorResponses } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';
import {
  creationOptionsSchema,
  passkeyNameSchema,
  passkeySchema,
  registrationResponseSchema,
} from '../webauthn-schemas.ts';

const passkeyAnswer = {
  type: 'object',
  required: ['passkey'],
  additionalProperties: false,
  properties: { passkey: passkeySchema },
} as const;

/** What each refused registration step answers. */
const REFUSALS: Readonly<Record<RegistrationRefusal | 'invalid', () => ApiError>> = {
  'reauth-required': () => new ApiError('REAUTH_REQUIRED'),
  'no-relying-party': () => new ApiError('BAD_REQUEST'),
  limit: () => new ApiError('PASSKEY_LIMIT', { max: PASSKEYS_MAX }),
  invalid: () => new ApiError('PASSKEY_INVALID'),
};

export const passkeyRoutes: RoutesPlugin = async (app, { services }) => {
  const { ownPasskeys, config } = services;
  /** The signed-in caller as their passkeys' changes name them and a registration binds its challenge. */
  const owner = (request: FastifyRequest): PasskeyOwner => ({
    user: request.user!,
    address: request.caller.ipKey(),
    sessionId: request.sessionId!,
    signedInAt: request.signedInAt,
  });

  app.get('/api/auth/passkeys', {
    config: { access: 'user' },
    schema: {
      tags: ['passkeys'],
      summary: "The signed-in user's passkeys, oldest first (never a key or a counter)",
      response: {
        200: {
          type: 'object',
          required: ['passkeys'],
          additionalProperties: false,
          properties: { passkeys: { type: 'array', items: passkeySchema } },
        },
      },
    },
    handler: async (request) => ({ passkeys: await ownPasskeys.list(request.user!.id) }),
  });

  app.post('/api/auth/passkeys/registration-options', {
    config: { access: 'user' },
    schema: {
      tags: ['passkeys'],
      summary:
        'Creation options for a new passkey: the challenge works once, for 5 minutes, for this session. ' +
        'Needs a sign-in within the last 10 minutes. A full store of challenges answers 503 LOGIN_BUSY.',
      response: {
        200: creationOptionsSchema,
        ...errorResponses('BAD_REQUEST', 'REAUTH_REQUIRED', 'PASSKEY_LIMIT', 'LOGIN_BUSY'),
      },
    },
    handler: async (request, reply) => {
      const outcome = await ownPasskeys.registrationOptions(owner(request), relyingPartyOf(request, config));
      if (outcome.kind === 'options') return outcome.options;
      if (outcome.kind === 'busy') return sendLoginBusy(reply, outcome.retryAfter);
      throw REFUSALS[outcome.kind]();
    },
  });

  app.post<{ Body: { name: string; response: RegistrationResponseJSON } }>('/api/auth/passkeys', {
    config: { access: 'user' },
    schema: {
      tags: ['passkeys'],
      summary: 'Store a passkey from the browser’s answer to the creation options',
      body: {
        type: 'object',
        required: ['name', 'response'],
        additionalProperties: false,
        properties: { name: passkeyNameSchema, response: registrationResponseSchema },
      },
      response: {
        201: passkeyAnswer,
        ...errorResponses('BAD_REQUEST', 'REAUTH_REQUIRED', 'PASSKEY_LIMIT', 'PASSKEY_INVALID'),
      },
    },
    handler: async (request, reply) => {
      const { name, response } = request.body;
      const outcome = await ownPasskeys.register(
        owner(request),
        relyingPartyOf(request, config),
        response,
        name.trim(),
      );
      if (outcome.kind !== 'added') throw REFUSALS[outcome.kind]();
      return reply.code(201).send({ passkey: outcome.passkey });
    },
  });

  // An addition to docs/rules.md#passkeys, which lists no rename route although the portal renames.
  app.patch<{ Params: { id: number }; Body: { name: string } }>('/api/auth/passkeys/:id', {
    config: { access: 'user' },
    schema: {
      tags: ['passkeys'],
      summary: 'Rename one of your passkeys',
      params: byIdParams,
      body: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: { name: passkeyNameSchema },
      },
      response: { 200: passkeyAnswer, ...errorResponses('NOT_FOUND') },
    },
    handler: async (request) => {
      const renamed = await ownPasskeys.rename(owner(request), request.params.id, request.body.name.trim());
      if (!renamed) throw new ApiError('NOT_FOUND');
      return { passkey: renamed };
    },
  });

  app.delete<{ Params: { id: number } }>('/api/auth/passkeys/:id', {
    config: { access: 'user' },
    schema: {
      tags: ['passkeys'],
      summary: 'Remove one of your passkeys (404 for anyone else’s)',
      params: byIdParams,
      response: { 204: { type: 'null', description: 'Removed.' }, ...errorResponses('NOT_FOUND') },
    },
    handler: async (request, reply) => {
      if (!(await ownPasskeys.remove(owner(request), request.params.id))) throw new ApiError('NOT_FOUND');
      return reply.code(204).send();
    },
  });
};
