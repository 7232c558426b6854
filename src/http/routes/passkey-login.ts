// Signing in with a passkey (contract §14): options with a single-use challenge, then the signed answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticationResponseJSON } from '../../auth/passkeys.ts';
import type { StoredCredential } from '../../db/repositories/passkeys.ts';
import { accountMaySignIn } from '../../db/repositories/users.ts';
import { normaliseEmail } from '../../email.ts';
import { ApiError, errorBody } from '../../errors.ts';
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
  const { passkeys, ceremonies, securityEvents, clock, config } = services;

  /**
   * Whether the answer signs in as the stored credential's account: the signature, origin, RP ID,
   * user verification and a counter that moves forward, recorded at once. A counter that went
   * back (a cloned authenticator) is refused and written as a security event.
   */
  const verify = async (
    request: FastifyRequest,
    response: AuthenticationResponseJSON,
    challenge: string,
    stored: StoredCredential,
  ): Promise<boolean> => {
    const rp = relyingPartyOf(request, config);
    if (rp === null) return false;
    const outcome = await ceremonies.verifyAssertion(rp, response, challenge, stored);
    // A disabled account signs in by no means: refused after the same check, as the same failure.
    if (outcome.ok)
      return (
        accountMaySignIn(stored) &&
        passkeys.recordUse(stored.id, stored.counter, outcome.counter, clock.now())
      );
    if (outcome.cloned)
      securityEvents.record({
        type: 'passkey-counter-refused',
        control: 'passkey',
        email: normaliseEmail(stored.user.email),
        address: request.caller.ipKey(),
      });
    return false;
  };

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
    // Never the hash gate: a passkey costs one signature check, so it waits behind no password check
    // and is never shed (contract §14).
    handler: async (request, reply) => {
      const { response } = request.body;
      // The challenge goes first, whatever follows: it works once even for an answer that fails.
      const challenge = await ceremonies.takeSignInChallenge(response, bindingOf(request));
      const stored = await passkeys.findCredential(response.id);
      // A failure counts against the account only when the credential names one, and only when the
      // challenge was still held: a challenge the service no longer holds (expired, replaced by a
      // newer one of this browser, never issued) is the service's loss, not the account's failure.
      // The account's budget never refuses a passkey (docs/rules.md#passkeys); the address's does.
      const flow = request.routeOptions.config.loginFlow!;
      const account = challenge !== null && stored !== null ? stored.user.email : null;
      const attempt = await flow.attempt(request.caller, account, null);
      if (attempt.refused) return sendRefusal(reply, attempt.refused);
      let ok: boolean;
      try {
        ok = challenge !== null && stored !== null && (await verify(request, response, challenge, stored));
      } catch (error) {
        await attempt.release(); // the check could not run (the database away): not a failed login
        throw error;
      }
      await attempt.settle(ok);
      if (!ok || !stored) throw new ApiError('INVALID_CREDENTIALS');
      return signIn(app, services, request, reply, stored.user);
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
