// Signing in with a passkey (docs/rules.md#passkeys): options with a single-use challenge, the answer.
import type { FastifyRequest } from 'fastify';
import { type AuthenticationResponseJSON, secondsOf } from '../../auth/passkeys.ts';
import { ApiError } from '../../errors.ts';
import { attemptPasskeyLogin } from '../../login/attempt-passkey-login.ts';
import { sendLoginBusy } from '../login-busy.ts';
import { loginLockHooks } from '../login-locks.ts';
import { relyingPartyOf } from '../origin.ts';
import { CSRF_COOKIE } from '../plugins/csrf.ts';
import { errorResponses } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';
import { answerSignIn, signedInResponse } from '../sign-in.ts';
import { authenticationResponseSchema, requestOptionsSchema } from '../webauthn-schemas.ts';

/**
 * What a challenge is bound to: what the caller's CSRF token is bound to, its session or, signed
 * out, its pre-session cookie. The CSRF check has passed, so one of them is there.
 */
function bindingOf(request: FastifyRequest): string {
  return request.sessionId ?? `pre-session\0${request.cookies[CSRF_COOKIE] ?? ''}`;
}

export const passkeyLoginRoutes: RoutesPlugin = async (app, { services }) => {
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
      return sendLoginBusy(reply, secondsOf(issued));
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
      return answerSignIn(app, services, request, reply, outcome, 'passkey');
    },
  });
};
