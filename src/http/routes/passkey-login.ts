// Signing in with a passkey (docs/rules.md#passkeys): options with a single-use challenge, the answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticationResponseJSON } from '../../auth/passkeys.ts';
import { ApiError, errorBody } from '../../errors.ts';
import { attemptPasskeyLogin } from '../../login/attempt-passkey-login.ts';
import { loginLockHooks } from '../login-locks.ts';
import { CSRF_COOKIE } from '../plugins/csrf.ts';
import { sendRefusal } from '../plugins/rate-limit.ts';
import { errorResponses } from '../schemas.ts';
import type { Services } from '../services.ts';
import { signedInResponse, signIn } from '../sign-in.ts';
import { authenticationResponseSchema, requestOptionsSchema } from '../webauthn-schemas.ts';
import { relyingPartyOf, secondsOf } from './passkeys.ts';

/**
 * What a challenge is bound to: what the caller's CSRF token is bound to, its session or, signed
 * out, its pre-session cookie. The CSRF check has passed, so one of them is there.
 */
function bindingOf(request: FastifyRequest): string {
  return request.sessionId ?? `pre-session\0${request.cookies[CSRF_COOKIE] ?? ''}`;
}

export async function passkeyLoginRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const { ceremonies, config, login } = services;

  app.post('/api/auth/passkey/options', {
    schema: {
      tags: ['auth'],
      summary:
        'Request options for a passkey sign-in: a fresh challenge that works once, for 5 minutes, for this ' +
        'browser, in place of its previous one. A full store of challenges answers 503 LOGIN_BUSY.',
      response: { 200: requestOptionsSchema, ...errorResponses('BAD_REQUEST', 'LOGIN_BUSY') },
    },
    handler: async (request, reply) => {
      const rp = relyingPartyOf(request, config);
      if (rp === null) throw new ApiError('BAD_REQUEST');
      const issued = await ceremonies.signInOptions(rp, bindingOf(request));
      if (issued.options !== undefined) return issued.options;
      // Full: refused rather than another browser's live challenge dropped (docs/rules.md#passkeys).
      return sendStoreFull(reply, secondsOf(issued));
    },
  });

  app.post<{ Body: { response: AuthenticationResponseJSON } }>('/api/auth/passkey/login', {
    // The login plan's look at the address, before the body (the answer names no email).
    ...loginLockHooks(login.passkey.flow),
    schema: {
      tags: ['auth'],
      summary: 'Sign in with a passkey; rotates the session and the CSRF token, like the password login',
      body: {
        type: 'object',
        required: ['response'],
        additionalProperties: false,
        properties: { response: authenticationResponseSchema },
      },
      response: { 200: signedInResponse, ...errorResponses('INVALID_CREDENTIALS') },
    },
    // Never the login gate: a passkey costs one signature check, so it waits behind no password
    // check and is never shed (docs/rules.md#passkeys).
    handler: async (request, reply) => {
      const outcome = await attemptPasskeyLogin(login.passkey, {
        response: request.body.response,
        binding: bindingOf(request),
        relyingParty: relyingPartyOf(request, config),
        caller: request.caller,
      });
      switch (outcome.kind) {
        case 'signed-in':
          return signIn(app, services, request, reply, outcome, 'passkey');
        case 'refused':
          return sendRefusal(reply, outcome.refusal);
        case 'invalid':
          throw new ApiError('INVALID_CREDENTIALS');
      }
    },
  });
}

/**
 * 503 LOGIN_BUSY for options the full challenge store could not keep. Answered, not thrown: under a
 * flood of options these are many, and none of them is a server error to log.
 */
function sendStoreFull(reply: FastifyReply, retryAfter: number): FastifyReply {
  return reply
    .code(503)
    .headers({ 'retry-after': retryAfter, 'cache-control': 'no-store' })
    .send(errorBody('LOGIN_BUSY', { retryAfter }));
}
