// Routes declare who may call them (`config.access`); this checks it after CSRF, before validation.
import type { RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';
import { hookList } from '../hook-list.ts';
import { asHook, type RequestStep } from '../request-pipeline.ts';

export type Access = 'public' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, any signed-in user, or admins. Defaults to public. */
    access?: Access;
  }
}

/** The access check of a route that needs a user or an admin; null for a public route. */
function accessCheck(access: Access): RequestStep | null {
  if (access === 'public') return null;
  return (request) => {
    if (!request.user) throw new ApiError('UNAUTHENTICATED');
    if (access === 'admin' && request.user.role !== 'admin') throw new ApiError('FORBIDDEN');
    return undefined;
  };
}

/** GET and HEAD have no body to parse and no CSRF check: their access is checked in the pipeline. */
function bodiless(method: RouteOptions['method']): boolean {
  const methods = Array.isArray(method) ? method : [method];
  return methods.every((m) => m === 'GET' || m === 'HEAD');
}

export const authorizationPlugin = fp(
  async (app) => {
    // After the rate limit (a 401 still spends and carries the headers), before validation. An
    // unsafe route checks it after CSRF, once its body is parsed; a safe one at the end of its
    // pipeline, which for a route with no body is the same place. Public routes pay nothing.
    app.requestPipeline.add((route) => {
      if (!route || !bodiless(route.method)) return null;
      return accessCheck(route.config?.access ?? 'public');
    });
    app.addHook('onRoute', (route) => {
      if (bodiless(route.method)) return;
      const check = accessCheck(route.config?.access ?? 'public');
      if (check) route.preValidation = [...hookList(route.preValidation), asHook(check)];
    });
  },
  { name: 'authorization', dependencies: ['csrf', 'request-pipeline'] },
);
