// Changing one's own password (docs/rules.md#accounts): re-checked like a sign-in, the others ended.
import type { FastifyInstance } from 'fastify';
import { DEVICE_COOKIE } from '../../auth/devices.ts';
import { OwnAccount } from '../../auth/own-account.ts';
import {
  offlineRefusal,
  PasswordCheckUnavailableError,
  type Refused,
  unchangedRefusal,
} from '../../auth/password-rules.ts';
import { ApiError, errorBody } from '../../errors.ts';
import { SIGN_IN_PASSWORD_MAX_LENGTH } from '../../limits.ts';
import { recheckPassword } from '../../login/recheck-password.ts';
import { cookieOptions } from '../plugins/csrf.ts';
import { sendRefusal } from '../plugins/rate-limit.ts';
import { SESSION_COOKIE } from '../plugins/session.ts';
import { setCookieHeader } from '../route-answers.ts';
import { errorResponses } from '../schemas.ts';
import type { Services } from '../services.ts';

/** What a client waits before asking again when the required breached-password API did not answer. */
const CHECK_RETRY_AFTER_SECONDS = 30;

/** 422 PASSWORD_REFUSED with its reason and what to do (the message says why and names the remedy). */
export function passwordRefused({ reason, message }: Refused): ApiError {
  return new ApiError('PASSWORD_REFUSED', { reason }, message);
}

export async function accountPasswordRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const { passwords, passwordRules, login, sessions, devices, clock, config } = services;
  const owners = new OwnAccount(services.db, { clock, instance: config.instanceId });

  app.post<{ Body: { currentPassword: string; newPassword: string } }>('/api/auth/password', {
    // A temporary password is replaced here: the one route with a body such a session may use.
    config: { access: 'signed-in' },
    schema: {
      tags: ['account'],
      summary:
        'Change your password: the current one is checked like a sign-in; the session rotates, every other ' +
        'session ends and every known device but this browser is forgotten',
      body: {
        type: 'object',
        required: ['currentPassword', 'newPassword'],
        additionalProperties: false,
        properties: {
          currentPassword: { type: 'string', minLength: 1, maxLength: SIGN_IN_PASSWORD_MAX_LENGTH },
          // Any length is the rules' to judge (`too_short`, `too_long`, with their messages) up to the body limit.
          newPassword: { type: 'string' },
        },
      },
      response: {
        200: {
          type: 'object',
          required: ['csrfToken'],
          additionalProperties: false,
          properties: { csrfToken: { type: 'string', description: 'The token of the rotated session.' } },
          headers: {
            'Set-Cookie': setCookieHeader(`${SESSION_COOKIE}, the rotated session.`, true),
          },
        },
        ...errorResponses(
          'CURRENT_PASSWORD_INVALID',
          'PASSWORD_REFUSED',
          'PASSWORD_CHECK_UNAVAILABLE',
          'LOGIN_BUSY',
        ),
      },
    },
    handler: async (request, reply) => {
      const { currentPassword, newPassword } = request.body;
      const user = request.user!;
      // The rules that need no network first: a refused password spends no check and no budget.
      const offline =
        offlineRefusal(newPassword, user.email) ??
        // The same password again, or a temporary one kept inside the new one: the admin who gave it knows it.
        unchangedRefusal(newPassword, currentPassword, user.mustChangePassword);
      if (offline) throw passwordRefused(offline);
      // The current password, checked as a sign-in checks one (src/login/recheck-password.ts).
      const recheck = await recheckPassword(login.passwordChange, {
        userId: user.id,
        email: user.email,
        password: currentPassword,
        caller: request.caller,
      });
      switch (recheck.kind) {
        case 'refused':
          return sendRefusal(reply, recheck.refusal);
        case 'busy':
          return reply
            .code(503)
            .headers({ 'retry-after': recheck.retryAfter, 'cache-control': 'no-store' })
            .send(errorBody('LOGIN_BUSY', { retryAfter: recheck.retryAfter }));
        case 'invalid':
          throw new ApiError('CURRENT_PASSWORD_INVALID');
        case 'confirmed':
          break;
      }
      const { verifiedHash } = recheck;
      let refusal: Refused | null;
      try {
        refusal = await passwordRules.refusal(newPassword, user.email);
      } catch (error) {
        if (!(error instanceof PasswordCheckUnavailableError)) throw error;
        throw new ApiError('PASSWORD_CHECK_UNAVAILABLE', { retryAfter: CHECK_RETRY_AFTER_SECONDS });
      }
      if (refusal) throw passwordRefused(refusal);
      const passwordHash = await passwords.rehash(newPassword);
      // This browser stays a known device when its cookie is the account's; its session rotates.
      const claim = devices.read(request.cookies[DEVICE_COOKIE]);
      const session = sessions.mint(user.id, request.headers['user-agent']);
      const changed = await owners.changePassword(
        { user, address: request.caller.ipKey() },
        { passwordHash, verifiedHash, currentIdHash: sessions.idHashOf(request.sessionId!) },
        session.row,
        claim?.userId === user.id ? claim.deviceId : null,
      );
      // An admin's reset, another change or the end of this session came first, and stands.
      if (!changed) throw new ApiError('UNAUTHENTICATED');
      // This instance at once; the others when the change is announced (at the commit).
      sessions.forgetUser(user.id);
      reply.setCookie(SESSION_COOKIE, session.cookie, {
        ...cookieOptions(request, config),
        maxAge: session.maxAgeSeconds,
      });
      return { csrfToken: app.csrf.forSession(session.sessionId) };
    },
  });
}
