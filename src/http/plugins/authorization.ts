// Routes declare who may call them (`config.access`); this checks it after CSRF, before validation.
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
    // A preValidation hook of each route that needs a user or an admin, added after CSRF's (this
    // plugin is registered after it): a 401 still spends the budget and carries its headers, comes
    // after the body's 413/400 and the CSRF 403, and before field validation. Public routes pay nothing.
    // A route with no body to read (GET, HEAD) has nothing between its rate limiter's onRequest
    // hook and this check but the (absent) body and CSRF (unsafe methods only): there the check is
    // a route-level onRequest hook after the limiter's, with the same answers in the same order,
    // and Fastify's preValidation phase (its hook runner, about 0.5 k instructions) does not run.
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
