// The session cookie: its name and options (the CSRF cookie's too), set at a sign-in, cleared at sign-out.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { servedOverHttps } from './origin.ts';

export const SESSION_COOKIE = 'tp_session';

/** The session and CSRF cookies' options: `Secure` whenever the browser reaches us over HTTPS. */
export function cookieOptions(request: FastifyRequest, config: Pick<Config, 'publicOrigin'>) {
  return { path: '/', httpOnly: true, sameSite: 'lax', secure: servedOverHttps(request, config) } as const;
}

/** Sets the cookie of a new session (a sign-in's, or the one a password change rotates to). */
export function setSessionCookie(
  reply: FastifyReply,
  session: { readonly cookie: string; readonly maxAgeSeconds: number },
  config: Pick<Config, 'publicOrigin'>,
): void {
  reply.setCookie(SESSION_COOKIE, session.cookie, {
    ...cookieOptions(reply.request, config),
    maxAge: session.maxAgeSeconds,
  });
}

/** Clears the session cookie: the session it named has ended. */
export function clearSessionCookie(reply: FastifyReply, config: Pick<Config, 'publicOrigin'>): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(reply.request, config));
}
