// CSRF bootstrap, login, logout and the current user (contract §3).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DEVICE_COOKIE, DeviceCookies } from '../../auth/devices.ts';
import type { GatePlace } from '../../auth/hash-gate.ts';
import type { WorkSolution } from '../../auth/work-challenges.ts';
import { accountMaySignIn } from '../../db/repositories/users.ts';
import { normaliseEmail } from '../../email.ts';
import { ApiError, errorBody } from '../../errors.ts';
import { PASSWORD_MAX_LENGTH } from '../../limits.ts';
import { CSRF_COOKIE, cookieOptions } from '../plugins/csrf.ts';
import { sendRefusal } from '../plugins/rate-limit.ts';
import { SESSION_COOKIE } from '../plugins/session.ts';
import { workSolutionSchema } from '../proved-work-schemas.ts';
import { setCookieHeader } from '../route-answers.ts';
import { errorResponses, ref } from '../schemas.ts';
import type { Services } from '../services.ts';
import { signedInResponse, signIn } from '../sign-in.ts';

const csrfTokenResponse = {
  type: 'object',
  required: ['csrfToken'],
  properties: { csrfToken: { type: 'string' } },
} as const;

export async function authRoutes(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  const { users, sessions, passwords, devices, loginGate, workChallenges } = services;

  app.get('/api/csrf-token', {
    schema: {
      tags: ['auth'],
      summary: 'Get the CSRF token to send as x-csrf-token on unsafe requests (login included)',
      response: {
        200: {
          ...csrfTokenResponse,
          headers: {
            'Set-Cookie': setCookieHeader(
              `${CSRF_COOKIE}, the pre-session cookie the token is bound to: set when the caller has no session and no such cookie yet.`,
              false,
            ),
          },
        },
      },
    },
    handler: async (request, reply) => ({ csrfToken: app.csrf.issue(request, reply) }),
  });

  app.post<{ Body: { email: string; password: string; work?: WorkSolution } }>('/api/auth/login', {
    schema: {
      tags: ['auth'],
      summary: 'Sign in; rotates the session and the CSRF token',
      body: {
        type: 'object',
        required: ['email', 'password'],
        additionalProperties: false,
        properties: {
          email: { type: 'string', minLength: 1, maxLength: 254 },
          password: { type: 'string', minLength: 1, maxLength: PASSWORD_MAX_LENGTH },
          work: workSolutionSchema,
        },
      },
      response: {
        200: signedInResponse,
        ...errorResponses('INVALID_CREDENTIALS', 'LOGIN_BUSY'),
      },
    },
    handler: async (request, reply) => {
      const { email, password, work } = request.body;
      // A known device: a valid cookie issued to the account this email names, after its last
      // revocation. Without a valid cookie the attempt is in the shared lane whatever the account,
      // so the gate decides its shed before the account is looked up: never by its existence.
      const claim = devices.read(request.cookies[DEVICE_COOKIE]);
      let credentials = claim === null ? undefined : await users.findCredentials(email);
      const known =
        credentials != null &&
        DeviceCookies.knownFor(claim, credentials.user.id, credentials.devicesValidAfter);
      // The shared lane orders by proved work (contract §15): one HMAC, one hash and, for a solution
      // that proves the bits asked now, one claim in the store; never a failure, whatever was sent.
      const place: GatePlace = known
        ? { lane: 'known', account: String(credentials!.user.id) }
        : { lane: 'shared', work: await workChallenges.prove(email, work, loginGate.askedBits()) };
      // Shed: no place in the queue and no hash, but the 503 waits out the bound (see HashGate.hold).
      const admission = loginGate.enter(place);
      if (admission.shed) return busy(reply, email, await loginGate.hold());
      // The login plan's flow, which the rate-limit plugin gives this route when it is registered.
      const flow = request.routeOptions.config.loginFlow!;
      // The account has as many known-device attempts waiting as it may: refused before any check or
      // count, the answer held like a shed's so that an insider's loop of them costs nothing.
      if (admission.ticket === null) {
        await loginGate.hold();
        return sendRefusal(reply, flow.backlogFull(admission.retryAfter));
      }
      const { ticket } = admission;
      try {
        credentials ??= await users.findCredentials(email);
        const attempt = await flow.attempt(request.caller, email, known ? claim!.deviceId : null);
        if (attempt.refused) return sendRefusal(reply, attempt.refused);
        const turn = await ticket.turn;
        if (turn.shed) {
          // It waited its bound without a check: not a failure, so whatever it reserved goes back.
          await attempt.release();
          return busy(reply, email, turn.retryAfter);
        }
        const matches = await ticket.run(() =>
          passwords.check(password, credentials?.passwordHash ?? null, normaliseEmail(email)),
        );
        // A disabled account is refused after the same check, and counted as the same failure: its
        // answer tells nothing a wrong password would not.
        const ok = matches && credentials != null && accountMaySignIn(credentials);
        // Hashes made at an older cost are redone now, on the same slot: a wrong password for such an
        // account would otherwise answer faster than an unknown email (checked at today's cost).
        const rehashed =
          ok && passwords.needsRehash(credentials!.passwordHash)
            ? await ticket.run(() => passwords.rehash(password))
            : null;
        ticket.close();
        await attempt.settle(ok);
        if (!ok || !credentials) throw new ApiError('INVALID_CREDENTIALS');
        if (rehashed !== null) await users.updatePasswordHash(credentials.user.id, rehashed);
        return await signIn(app, services, request, reply, credentials.user);
      } finally {
        ticket.close();
      }
    },
  });

  /** LOGIN_BUSY for a shared-lane attempt: under pressure with a challenge for its email (contract §15). */
  const busy = (reply: FastifyReply, email: string, retryAfter: number): FastifyReply => {
    const bits = loginGate.askedBits();
    return sendLoginBusy(
      reply,
      retryAfter,
      bits > 0 ? { challenge: workChallenges.issue(email), bits } : null,
    );
  };

  app.post('/api/auth/logout', {
    config: { access: 'user' },
    schema: {
      tags: ['auth'],
      summary: 'Sign out (ends the session on the server)',
      response: {
        204: {
          type: 'null',
          description: 'Signed out.',
          headers: { 'Set-Cookie': setCookieHeader(`${SESSION_COOKIE}, cleared.`, true) },
        },
      },
    },
    handler: async (request, reply) => {
      await sessions.destroy(request.cookies[SESSION_COOKIE]!);
      // The device cookie stays: this browser remains a known device of the account.
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request, services.config));
      return reply.code(204).send();
    },
  });

  app.get('/api/auth/me', {
    config: { access: 'user' },
    schema: {
      tags: ['auth'],
      summary: 'The signed-in user',
      response: {
        200: { type: 'object', required: ['user'], properties: { user: ref('User') } },
      },
    },
    // Synchronous: nothing to wait for, so no promise for Fastify to wait on (1.5 k instructions a request).
    handler: (request, reply) => {
      reply.send({ user: request.user! });
    },
  });
}

/**
 * 503 LOGIN_BUSY (contract §11): the gate turned the attempt away before any hash. Answered here,
 * not thrown: under a flood these are most answers, and none of them is a server error to log.
 */
function sendLoginBusy(
  reply: FastifyReply,
  retryAfter: number,
  work: { challenge: string; bits: number } | null,
): FastifyReply {
  return reply
    .code(503)
    .headers({ 'retry-after': retryAfter, 'cache-control': 'no-store' })
    .send(errorBody('LOGIN_BUSY', work ? { retryAfter, work } : { retryAfter }));
}
