// What every successful sign-in answers: a new session, a device cookie, the user and CSRF token.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SignIn } from '../accounts/sign-in.ts';
import { DEVICE_COOKIE, DEVICE_COOKIE_PATH } from '../auth/devices.ts';
import { ApiError } from '../errors.ts';
import type { LoginOutcome } from '../login/outcome.ts';
import { sendLoginBusy } from './login-busy.ts';
import { setCookieHeader } from './openapi-answers.ts';
import { servedOverHttps } from './origin.ts';
import { sendRefusal } from './plugins/rate-limit.ts';
import { ref } from './schemas.ts';
import type { Services } from './services.ts';
import { SESSION_COOKIE, setSessionCookie } from './session-cookie.ts';

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
 * Answers a sign-in's outcome, a password's or a passkey's: signed in (below), refused by a login
 * control (429 with its headers), shed by the gate (503 LOGIN_BUSY), or invalid (401).
 */
export function answerSignIn(
  app: FastifyInstance,
  services: Pick<Services, 'signIns' | 'config'>,
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: LoginOutcome,
  how: SignIn['how'],
) {
  switch (outcome.kind) {
    case 'signed-in':
      return signIn(app, services, request, reply, outcome, how);
    case 'refused':
      return sendRefusal(reply, outcome.refusal);
    case 'busy':
      return sendLoginBusy(reply, outcome.retryAfter, outcome.work);
    case 'invalid':
      throw new ApiError('INVALID_CREDENTIALS');
  }
}

/**
 * Signs `user` in on this reply (SignIns.start: the session, the browser's known device and the
 * event in one statement) and answers the body with the CSRF token bound to the new session; 401
 * INVALID_CREDENTIALS when the account moved on since its password was checked.
 */
async function signIn(
  app: FastifyInstance,
  { signIns, config }: Pick<Services, 'signIns' | 'config'>,
  request: FastifyRequest,
  reply: FastifyReply,
  { user, verifiedHash }: Pick<SignIn, 'user' | 'verifiedHash'>,
  how: SignIn['how'],
): Promise<{ user: SignIn['user']; csrfToken: string }> {
  const signedIn = await signIns.start({
    user,
    verifiedHash,
    how,
    previousSession: request.cookies[SESSION_COOKIE],
    deviceCookie: request.cookies[DEVICE_COOKIE],
    userAgent: request.headers['user-agent'],
    address: request.caller.ipKey(),
  });
  // A reset, a password change or a disable landed while the password was checked: it stands.
  if (!signedIn) throw new ApiError('INVALID_CREDENTIALS');
  setSessionCookie(reply, signedIn.session, config);
  // Only /api/auth ever receives the device cookie.
  reply.setCookie(DEVICE_COOKIE, signedIn.device.value, {
    path: DEVICE_COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: servedOverHttps(request, config),
    maxAge: signedIn.device.maxAgeSeconds,
  });
  return { user, csrfToken: app.csrf.forSession(signedIn.session.sessionId) };
}
