// Resolves the session cookie on every request into `request.user` (or null) before anything else.
import fp from 'fastify-plugin';
import type { SessionService } from '../../auth/sessions.ts';
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
    app.addHook('onRequest', (request, _reply, done) => {
      const cookie = request.cookies[SESSION_COOKIE];
      if (!cookie) return done();
      const resolved = sessions.resolve(cookie);
      if (!(resolved instanceof Promise)) {
        if (resolved) {
          request.user = resolved.user;
          request.sessionId = resolved.sessionId;
        }
        return done();
      }
      resolved.then((session) => {
        if (session) {
          request.user = session.user;
          request.sessionId = session.sessionId;
        }
        done();
      }, done);
    });
  },
  { name: 'session', dependencies: ['cookies'] },
);
