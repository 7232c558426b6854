// Routes declare who may call them (`config.access`); this checks it after the limiter and CSRF, before validation.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';

export type Access = 'public' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, any signed-in user, or admins. Defaults to public. */
    access?: Access;
  }
}

/** Methods whose requests Fastify reads no body for. */
const BODYLESS = new Set(['GET', 'HEAD']);

function accessCheck(access: 'user' | 'admin') {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (!request.user) done(new ApiError('UNAUTHENTICATED'));
    else if (access === 'admin' && request.user.role !== 'admin') done(new ApiError('FORBIDDEN'));
    else done();
  };
}

export const authorizationPlugin = fp(
  async (app) => {
    // A hook of each route that needs a user or an admin, added after the limiter's and CSRF's
    // (this plugin is registered after both): a 401 still spends the budget and carries its
    // headers, comes after the body's 413/400 and the CSRF 403, and before field validation.
    // Public routes pay nothing. A route with a body checks in preValidation, once the body is
    // read; a GET or HEAD route has no body and no CSRF check, so the same order holds with the
    // check in onRequest, and Fastify's preValidation phase does not run (measured: BENCHMARKS.md).
    app.addHook('onRoute', (route) => {
      const access = route.config?.access ?? 'public';
      if (access === 'public') return;
      const check = accessCheck(access);
      if ([route.method].flat().every((method) => BODYLESS.has(method)))
        route.onRequest = [...[route.onRequest ?? []].flat(), check];
      else route.preValidation = [...[route.preValidation ?? []].flat(), check];
    });
  },
  { name: 'authorization', dependencies: ['csrf'] },
);
