// Routes declare who may call them (`config.access`); this checks it after CSRF, before validation.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';
import { hookList } from '../hook-list.ts';

export type Access = 'public' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, any signed-in user, or admins. Defaults to public. */
    access?: Access;
  }
}

export const authorizationPlugin = fp(
  async (app) => {
    // Attached only to routes that need a user or an admin: public routes pay nothing for it.
    app.addHook('onRoute', (route) => {
      const access = route.config?.access ?? 'public';
      if (access === 'public') return;
      const check = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
        if (!request.user) done(new ApiError('UNAUTHENTICATED'));
        else if (access === 'admin' && request.user.role !== 'admin') done(new ApiError('FORBIDDEN'));
        else done();
      };
      route.preValidation = [...hookList(route.preValidation), check];
    });
  },
  { name: 'authorization', dependencies: ['csrf'] },
);
