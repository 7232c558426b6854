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
    app.addHook('onRoute', (route) => {
      const access = route.config?.access ?? 'public';
      if (access === 'public') return;
      route.preValidation = [...[route.preValidation ?? []].flat(), accessCheck(access)];
    });
  },
  { name: 'authorization', dependencies: ['csrf'] },
);
