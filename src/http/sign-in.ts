// What every successful sign-in answers: a new session, a device cookie, the user and CSRF token.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEVICE_COOKIE, DEVICE_COOKIE_PATH } from '../auth/devices.ts';
import { writeSignIn } from '../db/repositories/sign-ins.ts';
import type { User } from '../db/repositories/users.ts';
import { normaliseEmail } from '../email.ts';
import { ApiError } from '../errors.ts';
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
 * it is worthless after it), a fresh device cookie (docs/rules.md#known-devices), and the body with
 * the CSRF token bound to the new session. The session, the browser's known-device row, the
 * account's last sign-in and the `signed-in` security event are one statement (writeSignIn), which
 * writes nothing when the account moved on since its password was checked (401 INVALID_CREDENTIALS).
 */
export async function signIn(
  app: FastifyInstance,
  { sessions, devices, config, db }: Pick<Services, 'sessions' | 'devices' | 'config' | 'db'>,
  request: FastifyRequest,
  reply: FastifyReply,
  { user, verifiedHash }: { user: User; verifiedHash: string | null },
  how: 'password' | 'passkey',
): Promise<{ user: User; csrfToken: string }> {
  const previous = request.cookies[SESSION_COOKIE];
  if (previous) await sessions.destroy(previous);
  const session = sessions.mint(user.id, request.headers['user-agent']);
  const device = devices.issue(user.id);
  // This browser's cookie for this very account renews its known-device row: the same Device.
  const presented = devices.read(request.cookies[DEVICE_COOKIE]);
  const { written, endedSessions } = await writeSignIn(db, {
    session: session.row,
    verifiedHash,
    deviceId: device.claim.deviceId,
    previousDeviceId: presented?.userId === user.id ? presented.deviceId : null,
    event: {
      control: how,
      email: normaliseEmail(user.email),
      address: request.caller.ipKey(),
      instance: config.instanceId,
    },
  });
  // A reset, a password change or a disable landed while the password was checked: it stands.
  if (!written) throw new ApiError('INVALID_CREDENTIALS');
  // The account's least recently used session, beyond its most: this instance stops serving it now.
  if (endedSessions > 0) sessions.forgetUser(user.id);
  reply.setCookie(SESSION_COOKIE, session.cookie, {
    ...cookieOptions(request, config),
    maxAge: session.maxAgeSeconds,
  });
  // Only /api/auth ever receives the device cookie.
  reply.setCookie(DEVICE_COOKIE, device.value, {
    path: DEVICE_COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: servedOverHttps(request, config),
    maxAge: devices.maxAgeSeconds,
  });
  return { user, csrfToken: app.csrf.forSession(session.sessionId) };
}
