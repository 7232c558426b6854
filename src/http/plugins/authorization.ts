// Who may call a route (`config.access`), checked after the limiter and CSRF, before validation.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';

/**
 * Who may call a route:
 * - `anyone`: anyone at all, a session that must change its password included (the CSRF token);
 * - `public`: anyone, but a session that must change its password first gets 403
 *   PASSWORD_CHANGE_REQUIRED (under /api; outside it, the page and the docs, anyone);
 * - `signed-in`: a signed-in user, even one who must change their password first (who am I, the
 *   password change, sign out);
 * - `user`: a signed-in user with a password of their own;
 * - `admin`: the same, with the admin role.
 */
export type Access = 'anyone' | 'public' | 'signed-in' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (see Access). Defaults to public. */
    access?: Access;
  }
}

/** Methods whose requests Fastify reads no body for. */
const BODYLESS = new Set(['GET', 'HEAD']);

/**
 * The checks in the order of docs/architecture.md: authentication (401), then a temporary password
 * still to change (403 PASSWORD_CHANGE_REQUIRED, docs/rules.md#accounts), then the role (403).
 */
function accessCheck(access: Exclude<Access, 'anyone'>) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const user = request.user;
    if (access === 'public')
      done(user?.mustChangePassword ? new ApiError('PASSWORD_CHANGE_REQUIRED') : undefined);
    else if (!user) done(new ApiError('UNAUTHENTICATED'));
    else if (access !== 'signed-in' && user.mustChangePassword)
      done(new ApiError('PASSWORD_CHANGE_REQUIRED'));
    else if (access === 'admin' && user.role !== 'admin') done(new ApiError('FORBIDDEN'));
    else done();
  };
}

export const authorizationPlugin = fp(
  async (app) => {
    // A hook of each route that needs a user or an admin, added after the limiter's and CSRF's
    // (this plugin is registered after both): a 401 still spends the budget and carries its
    // headers, comes after the body's 413/400 and the CSRF 403, and before field validation.
    // Public routes outside /api and `anyone` routes pay nothing. A route with a body checks in
    // preValidation, once the body is read; a GET or HEAD route has no body and no CSRF check, so
    // the same order holds with the check in onRequest, and Fastify's preValidation phase does not
    // run (measured: BENCHMARKS.md).
    app.addHook('onRoute', (route) => {
      const access = route.config?.access ?? 'public';
      if (access === 'anyone' || (access === 'public' && !route.url.startsWith('/api/'))) return;
      const check = accessCheck(access);
      if ([route.method].flat().every((method) => BODYLESS.has(method)))
        route.onRequest = [...[route.onRequest ?? []].flat(), check];
      else route.preValidation = [...[route.preValidation ?? []].flat(), check];
    });
  },
  { name: 'authorization', dependencies: ['csrf'] },
);
