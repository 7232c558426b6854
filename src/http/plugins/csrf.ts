// CSRF on every unsafe /api request: the token header, bound to the caller's cookie, and Fetch metadata.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { csrfTokenFor, newSecret, tokensEqual } from '../../auth/tokens.ts';
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import { ownOrigin } from '../origin.ts';
import { cookieOptions } from '../session-cookie.ts';

export const CSRF_COOKIE = 'tp_csrf';
// Exported for the OpenAPI document's security scheme.
export const CSRF_HEADER = 'x-csrf-token';
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface CsrfTokens {
  /** The token for this caller: bound to the session, or to a pre-session cookie set here if missing. */
  issue(request: FastifyRequest, reply: FastifyReply): string;
  /** The token bound to a session id (what the login response hands out). */
  forSession(sessionId: string): string;
}

declare module 'fastify' {
  interface FastifyInstance {
    csrf: CsrfTokens;
  }
}

export const csrfPlugin = fp<{ secret: string; config: Pick<Config, 'publicOrigin'> }>(
  async (app, { secret, config }) => {
    const expectedToken = (request: FastifyRequest): string | null => {
      if (request.sessionId) return csrfTokenFor(secret, 'session', request.sessionId);
      const preSession = request.cookies[CSRF_COOKIE];
      return preSession ? csrfTokenFor(secret, 'pre-session', preSession) : null;
    };

    app.decorate<CsrfTokens>('csrf', {
      issue(request, reply) {
        if (request.sessionId) return csrfTokenFor(secret, 'session', request.sessionId);
        let preSession = request.cookies[CSRF_COOKIE];
        if (!preSession || preSession.length > 64) {
          preSession = newSecret();
          reply.setCookie(CSRF_COOKIE, preSession, cookieOptions(request, config));
        }
        return csrfTokenFor(secret, 'pre-session', preSession);
      },
      forSession: (sessionId) => csrfTokenFor(secret, 'session', sessionId),
    });

    const checkCsrf = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
      done(csrfProblem(request) ?? undefined);
    };
    const csrfProblem = (request: FastifyRequest): ApiError | null => {
      if (request.headers['sec-fetch-site'] === 'cross-site') return new ApiError('CSRF_INVALID');
      const origin = request.headers.origin;
      if (origin !== undefined && !sameOrigin(origin, ownOrigin(request, config))) {
        return new ApiError('CSRF_INVALID');
      }
      const sent = request.headers[CSRF_HEADER];
      const expected = expectedToken(request);
      if (typeof sent !== 'string' || expected === null || !tokensEqual(sent, expected)) {
        return new ApiError('CSRF_INVALID');
      }
      return null;
    };

    // A preValidation hook of each unsafe /api route, attached as the route is registered (safe
    // requests pay nothing for it): it runs once the body is parsed (413/400 first), after the
    // login's account lock, before the access check and field validation.
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!route.url.startsWith('/api/') || !methods.some((method) => UNSAFE.has(method))) return;
      route.preValidation = [...[route.preValidation ?? []].flat(), checkCsrf];
    });
  },
  { name: 'csrf', dependencies: ['session'] },
);

/**
 * Compares a browser's Origin with ours (already normalized) as URLs do (`http://host:80` is
 * `http://host`); `null`, garbage and a request that names no host of ours never match.
 */
function sameOrigin(origin: string, own: string | null): boolean {
  if (own === null) return false;
  if (origin === own) return true;
  try {
    return new URL(origin).origin === new URL(own).origin;
  } catch {
    return false;
  }
}
