// Resolves the session cookie on every request into `request.user` (or null), before the rate limiter.
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ResolvedSession, SessionService } from '../../auth/sessions.ts';
import type { User } from '../../db/repositories/users.ts';
import { SESSION_COOKIE } from '../session-cookie.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user, or null for an unauthenticated caller. */
    readonly user: User | null;
    /** The id the CSRF token of a signed-in caller is bound to. */
    readonly sessionId: string | null;
    /** When the caller's session signed in (epoch ms), for what asks for a recent sign-in; null if unknown. */
    readonly signedInAt: number | null;
    /** The public id of the caller's session (the list of sessions marks it current); null signed out. */
    readonly sessionPublicId: string | null;
  }
}

export const sessionPlugin = fp<{ sessions: SessionService }>(
  async (app, { sessions }) => {
    // One property set per request, the resolved session; `user`, `sessionId`, `signedInAt` and
    // `sessionPublicId` read it. Fastify sets every decorated value on each new request through one
    // megamorphic keyed store (measured: BENCHMARKS.md); getters live on the prototype and cost none.
    const kSession = Symbol('session');
    type WithSession = FastifyRequest & { [kSession]: ResolvedSession | null };
    app.decorateRequest(kSession, null);
    // Each request property and the part of the resolved session it reads.
    const parts = {
      user: 'user',
      sessionId: 'sessionId',
      signedInAt: 'signedInAt',
      sessionPublicId: 'publicId',
    } as const;
    for (const [property, part] of Object.entries(parts)) {
      app.decorateRequest(property, {
        getter() {
          return (this as WithSession)[kSession]?.[part] ?? null;
        },
      });
    }
    // An onRequest hook, after @fastify/cookie's: the rate limiter's hook, which keys by user, comes
    // after it. A session served from the cache resolves without waiting.
    app.addHook('onRequest', (request, _reply, done) => {
      const cookie = request.cookies[SESSION_COOKIE];
      if (!cookie) return done();
      const resolved = sessions.resolve(cookie);
      if (!(resolved instanceof Promise)) {
        (request as WithSession)[kSession] = resolved;
        return done();
      }
      resolved.then((session) => {
        (request as WithSession)[kSession] = session;
        done();
      }, done);
    });
  },
  { name: 'session', dependencies: ['@fastify/cookie'] },
);
