// Resolves the session cookie on every request into `request.user` (or null) before anything else.
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
  }
}

export const sessionPlugin = fp<{ sessions: SessionService }>(
  async (app, { sessions }) => {
    app.decorateRequest('user', null);
    app.decorateRequest('sessionId', null);
    const signIn = (request: FastifyRequest, session: ResolvedSession | null): undefined => {
      if (session) {
        request.user = session.user;
        request.sessionId = session.sessionId;
      }
      return undefined;
    };
    // Every route's pipeline resolves the session before the rate limiter, which keys by user.
    app.requestPipeline.add(() => (request) => {
      const cookie = request.cookies[SESSION_COOKIE];
      if (!cookie) return undefined;
      const resolved = sessions.resolve(cookie);
      return resolved instanceof Promise
        ? resolved.then((session) => signIn(request, session))
        : signIn(request, resolved);
    });
  },
  { name: 'session', dependencies: ['cookies', 'request-pipeline'] },
);
