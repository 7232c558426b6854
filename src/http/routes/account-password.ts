// Changing one's own password (docs/rules.md#accounts): re-checked like a sign-in, the others ended.
import { DEVICE_COOKIE } from '../../auth/devices.ts';
import type { Refused } from '../../auth/password-rules.ts';
import { ApiError } from '../../errors.ts';
import { SIGN_IN_PASSWORD_MAX_LENGTH } from '../../limits.ts';
import { sendLoginBusy } from '../login-busy.ts';
import { setCookieHeader } from '../openapi-answers.ts';
import { sendRefusal } from '../plugins/rate-limit.ts';
import { errorResponses } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';
import { SESSION_COOKIE, setSessionCookie } from '../session-cookie.ts';

/** What a client waits before asking again when the required breached-password API did not answer. */
const CHECK_RETRY_AFTER_SECONDS = 30;

/** 422 PASSWORD_REFUSED with its reason and what to do (the message says why and names the remedy). */
function passwordRefused({ reason, message }: Refused): ApiError {
  return new ApiError('PASSWORD_REFUSED', { reason }, message);
}

export const accountPasswordRoutes: RoutesPlugin = async (app, { services }) => {
  const { ownAccount, config } = services;

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
      const outcome = await ownAccount.changePassword(
        { user: request.user!, address: request.caller.ipKey() },
        {
          currentPassword,
          newPassword,
          sessionId: request.sessionId!,
          deviceCookie: request.cookies[DEVICE_COOKIE],
          userAgent: request.headers['user-agent'],
          caller: request.caller,
        },
      );
      switch (outcome.kind) {
        case 'changed':
          setSessionCookie(reply, outcome.session, config);
          return { csrfToken: app.csrf.forSession(outcome.session.sessionId) };
        case 'password-refused':
          throw passwordRefused(outcome.refused);
        case 'refused':
          return sendRefusal(reply, outcome.refusal);
        case 'busy':
          return sendLoginBusy(reply, outcome.retryAfter);
        case 'invalid':
          throw new ApiError('CURRENT_PASSWORD_INVALID');
        case 'check-unavailable':
          throw new ApiError('PASSWORD_CHECK_UNAVAILABLE', { retryAfter: CHECK_RETRY_AFTER_SECONDS });
        case 'superseded':
          // An admin's reset, another change or the end of this session came first, and stands.
          throw new ApiError('UNAUTHENTICATED');
      }
    },
  });
};
