// /healthz while the process runs, /readyz per dependency (docs/rules.md#running-it).
import { isDraining } from '../drain.ts';
import type { RoutesPlugin } from '../services.ts';

export const healthRoutes: RoutesPlugin = async (app, { services }) => {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  const { readiness } = services;

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    // A draining instance (SIGTERM) is out of rotation at once, whatever its dependencies say.
    if (isDraining(app.server)) {
      reply.code(503).header('cache-control', 'no-store');
      return { status: 'draining' };
    }
    const { fatal, body } = await readiness.current();
    const degraded = Object.values(body).some((state) => state !== 'up');
    reply.code(fatal ? 503 : 200).header('cache-control', 'no-store');
    return { status: fatal ? 'unavailable' : degraded ? 'degraded' : 'ok', ...body };
  });
};
