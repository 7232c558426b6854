// CSRF bootstrap, login, logout and the current user (docs/rules.md#authentication-and-csrf).
import { DEVICE_COOKIE } from '../../auth/devices.ts';
import { SIGN_IN_PASSWORD_MAX_LENGTH } from '../../limits.ts';
import { attemptLogin } from '../../login/attempt-login.ts';
import type { WorkSolution } from '../../login/work-challenges.ts';
import { loginLockHooks } from '../login-locks.ts';
import { setCookieHeader } from '../openapi-answers.ts';
import { CSRF_COOKIE } from '../plugins/csrf.ts';
import { workSolutionSchema } from '../proved-work-schemas.ts';
import { errorResponses, ref } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';
import { clearSessionCookie, SESSION_COOKIE } from '../session-cookie.ts';
import { answerSignIn, signedInResponse } from '../sign-in.ts';

const csrfTokenResponse = {
  type: 'object',
  required: ['csrfToken'],
  properties: { csrfToken: { type: 'string' } },
} as const;

export const authRoutes: RoutesPlugin = async (app, { services }) => {
  const { sessions, login, config } = services;

  app.get('/api/csrf-token', {
    // A session whose temporary password is still to change needs the token to change it.
    config: { access: 'anyone' },
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
    // The login plan's looks at the address and the account, before the body and after it.
    ...loginLockHooks(login.password.flow),
    schema: {
      tags: ['auth'],
      summary: 'Sign in; rotates the session and the CSRF token',
      body: {
        type: 'object',
        required: ['email', 'password'],
        additionalProperties: false,
        properties: {
          email: { type: 'string', minLength: 1, maxLength: 254 },
          password: { type: 'string', minLength: 1, maxLength: SIGN_IN_PASSWORD_MAX_LENGTH },
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
      const outcome = await attemptLogin(login.password, {
        email,
        password,
        work,
        deviceCookie: request.cookies[DEVICE_COOKIE],
        caller: request.caller,
      });
      return answerSignIn(app, services, request, reply, outcome, 'password');
    },
  });

  app.post('/api/auth/logout', {
    config: { access: 'signed-in' },
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
      clearSessionCookie(reply, config);
      return reply.code(204).send();
    },
  });

  app.get('/api/auth/me', {
    config: { access: 'signed-in' },
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
};
