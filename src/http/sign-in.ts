// What every successful sign-in answers (password or passkey): a new session, a device cookie, the user and CSRF token.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEVICE_COOKIE, DEVICE_COOKIE_PATH } from '../auth/devices.ts';
import type { User } from '../db/repositories/users.ts';
import { servedOverHttps } from './origin.ts';
import { cookieOptions } from './plugins/csrf.ts';
import { SESSION_COOKIE } from './plugins/session.ts';
import { setCookieHeader } from './route-answers.ts';
import { ref } from './schemas.ts';
import type { Services } from './services.ts';

/** The 200 of a sign-in route: its body and its two cookies. */
export const signedInResponse = {
  type: 'object',
  required: ['user', 'csrfToken'],
  properties: { user: ref('User'), csrfToken: { type: 'string' } },
  headers: {
    'Set-Cookie': setCookieHeader(
      `Two cookies: ${SESSION_COOKIE}, the new session (HttpOnly, SameSite=Lax, Path=/), and ${DEVICE_COOKIE}, ` +
        'which makes this client a known device of the account for later logins (HttpOnly, SameSite=Strict, Path=/api/auth).',
      true,
    ),
  },
} as const;

/**
 * Signs `user` in on this reply: a new session id at every sign-in (a session id planted before
 * it is worthless after it), a fresh device cookie (docs/rules.md#known-devices), and the body with the CSRF
 * token bound to the new session.
 */
export async function signIn(
  app: FastifyInstance,
  { sessions, devices, config }: Pick<Services, 'sessions' | 'devices' | 'config'>,
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
): Promise<{ user: User; csrfToken: string }> {
  const previous = request.cookies[SESSION_COOKIE];
  if (previous) await sessions.destroy(previous);
  const session = await sessions.create(user.id);
  reply.setCookie(SESSION_COOKIE, session.cookie, {
    ...cookieOptions(request, config),
    maxAge: session.maxAgeSeconds,
  });
  // Only /api/auth ever receives the device cookie.
  reply.setCookie(DEVICE_COOKIE, devices.issue(user.id).value, {
    path: DEVICE_COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: servedOverHttps(request, config),
    maxAge: devices.maxAgeSeconds,
  });
  return { user, csrfToken: app.csrf.forSession(session.sessionId) };
}
