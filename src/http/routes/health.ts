// Liveness and readiness (contract §7): /healthz while the process runs, /readyz per dependency.
import type { FastifyInstance } from 'fastify';
import { isDraining } from '../drain.ts';
import type { Services } from '../services.ts';

export async function healthRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    // A draining instance (SIGTERM) is out of rotation at once, whatever its dependencies say.
    if (isDraining(app.server)) {
      reply.code(503).header('cache-control', 'no-store');
      return { status: 'draining' };
    }
    const body: Record<string, string> = {};
    let fatal = false;
    try {
      await services.db.query('SELECT 1');
      body.database = 'up';
    } catch {
      body.database = 'down';
      fatal = true;
    }
    for (const check of services.readiness) {
      const result = await check.check();
      body[check.name] = result.state;
      fatal ||= result.fatal;
    }
    const degraded = Object.values(body).some((state) => state !== 'up');
    reply.code(fatal ? 503 : 200).header('cache-control', 'no-store');
    return { status: fatal ? 'unavailable' : degraded ? 'degraded' : 'ok', ...body };
  });
}
