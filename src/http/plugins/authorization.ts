// Routes declare who may call them (`config.access`); this checks it after CSRF, before validation.
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';

export type Access = 'public' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, any signed-in user, or admins. Defaults to public. */
    access?: Access;
  }
}

export const authorizationPlugin = fp(
  async (app) => {
    app.addHook('preValidation', async (request) => {
      const access = request.routeOptions.config.access ?? 'public';
      if (access === 'public') return;
      if (!request.user) throw new ApiError('UNAUTHENTICATED');
      if (access === 'admin' && request.user.role !== 'admin') throw new ApiError('FORBIDDEN');
    });
  },
  { name: 'authorization', dependencies: ['csrf'] },
);
