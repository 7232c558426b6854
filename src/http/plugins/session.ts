// Resolves the session cookie on every request into `request.user` (or null), before the rate limiter.
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ResolvedSession, SessionService } from '../../auth/sessions.ts';
import type { User } from '../../db/repositories/users.ts';

export const SESSION_COOKIE = 'tp_session';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user, or null for an unauthenticated caller. */
    user: User | null;
    /** The id the CSRF token of a signed-in caller is bound to. */
    sessionId: string | null;
    /** When the caller's session signed in (epoch ms), for what asks for a recent sign-in; null if unknown. */
    signedInAt: number | null;
  }
}

function signIn(request: FastifyRequest, session: ResolvedSession | null): void {
  if (!session) return;
  request.user = session.user;
  request.sessionId = session.sessionId;
  request.signedInAt = session.signedInAt;
}

export const sessionPlugin = fp<{ sessions: SessionService }>(
  async (app, { sessions }) => {
    app.decorateRequest('user', null);
    app.decorateRequest('sessionId', null);
    app.decorateRequest('signedInAt', null);
    // An onRequest hook, after @fastify/cookie's: the rate limiter's hook, which keys by user, comes
    // after it. A session served from the cache resolves without waiting.
    app.addHook('onRequest', (request, _reply, done) => {
      const cookie = request.cookies[SESSION_COOKIE];
      if (!cookie) return done();
      const resolved = sessions.resolve(cookie);
      if (!(resolved instanceof Promise)) {
        signIn(request, resolved);
        return done();
      }
      resolved.then((session) => {
        signIn(request, session);
        done();
      }, done);
    });
  },
  { name: 'session', dependencies: ['@fastify/cookie'] },
);
