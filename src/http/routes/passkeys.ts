// A signed-in user's passkeys (docs/rules.md#passkeys): list, register, rename, remove.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  REAUTH_WINDOW_MS,
  type RegistrationResponseJSON,
  type RelyingParty,
  relyingParty,
} from '../../auth/passkeys.ts';
import type { Config } from '../../config.ts';
import { normaliseEmail } from '../../email.ts';
import { ApiError } from '../../errors.ts';
import { PASSKEYS_MAX } from '../../limits.ts';
import { ownOrigin } from '../origin.ts';
import { errorResponses, idSchema } from '../schemas.ts';
import type { Services } from '../services.ts';
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

const byId = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: idSchema },
} as const;

/**
 * The relying party a request speaks to: the service's own origin (docs/rules.md#authentication-and-csrf, PUBLIC_ORIGIN or
 * the request as a browser sees it) and its host as RP ID; null when the request names no usable host.
 */
/** The whole seconds of a full challenge store's wait, for Retry-After: at least 1. */
export function secondsOf({ retryAfterMs }: { readonly retryAfterMs: number }): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}

export function relyingPartyOf(request: FastifyRequest, config: Config): RelyingParty | null {
  const origin = ownOrigin(request, config);
  return origin === null ? null : relyingParty(origin);
}

export async function passkeyRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const { passkeys, ceremonies, securityEvents, clock, config } = services;

  const relyingPartyFor = (request: FastifyRequest): RelyingParty => {
    const rp = relyingPartyOf(request, config);
    if (rp === null) throw new ApiError('BAD_REQUEST');
    return rp;
  };

  /** Registering needs a sign-in within the last 10 minutes of this session (docs/rules.md#passkeys). */
  const requireRecentSignIn = (request: FastifyRequest): void => {
    const at = request.signedInAt;
    if (at === null || clock.now() - at > REAUTH_WINDOW_MS) throw new ApiError('REAUTH_REQUIRED');
  };

  const record = (request: FastifyRequest, type: 'passkey-added' | 'passkey-removed'): void =>
    securityEvents.record({
      type,
      control: 'passkey',
      email: normaliseEmail(request.user!.email),
      address: request.caller.ipKey(),
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
    handler: async (request) => ({ passkeys: await passkeys.list(request.user!.id) }),
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
    handler: async (request) => {
      requireRecentSignIn(request);
      const user = request.user!;
      const existing = await passkeys.credentialsOf(user.id);
      if (existing.length >= PASSKEYS_MAX) throw new ApiError('PASSKEY_LIMIT', { max: PASSKEYS_MAX });
      const handle = await passkeys.userHandle(user.id);
      const rp = relyingPartyFor(request);
      const issued = await ceremonies.registrationOptions(rp, user, handle, existing, request.sessionId!);
      // The store of challenges is full: refused, rather than another session's challenge dropped.
      if (issued.options === undefined) throw new ApiError('LOGIN_BUSY', { retryAfter: secondsOf(issued) });
      return issued.options;
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
      requireRecentSignIn(request);
      const user = request.user!;
      const rp = relyingPartyFor(request);
      const credential = await ceremonies.verifyRegistration(rp, request.body.response, request.sessionId!);
      if (!credential) throw new ApiError('PASSKEY_INVALID');
      const name = request.body.name.trim();
      const added = await passkeys.add(user.id, { ...credential, name }, PASSKEYS_MAX, clock.now());
      if (added === null) throw new ApiError('PASSKEY_LIMIT', { max: PASSKEYS_MAX });
      if (added === 'taken') throw new ApiError('PASSKEY_INVALID');
      record(request, 'passkey-added');
      return reply.code(201).send({ passkey: added });
    },
  });

  // An addition to docs/rules.md#passkeys, which lists no rename route although the portal renames.
  app.patch<{ Params: { id: number }; Body: { name: string } }>('/api/auth/passkeys/:id', {
    config: { access: 'user' },
    schema: {
      tags: ['passkeys'],
      summary: 'Rename one of your passkeys',
      params: byId,
      body: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: { name: passkeyNameSchema },
      },
      response: { 200: passkeyAnswer, ...errorResponses('NOT_FOUND') },
    },
    handler: async (request) => {
      const renamed = await passkeys.rename(request.user!.id, request.params.id, request.body.name.trim());
      if (!renamed) throw new ApiError('NOT_FOUND');
      return { passkey: renamed };
    },
  });

  app.delete<{ Params: { id: number } }>('/api/auth/passkeys/:id', {
    config: { access: 'user' },
    schema: {
      tags: ['passkeys'],
      summary: 'Remove one of your passkeys (404 for anyone else’s)',
      params: byId,
      response: { 204: { type: 'null', description: 'Removed.' }, ...errorResponses('NOT_FOUND') },
    },
    handler: async (request, reply) => {
      if (!(await passkeys.remove(request.user!.id, request.params.id))) throw new ApiError('NOT_FOUND');
      record(request, 'passkey-removed');
      return reply.code(204).send();
    },
  });
}
