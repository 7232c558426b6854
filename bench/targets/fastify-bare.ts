// Target: Fastify with no limiter, the same route and answer (and no logger, unless BENCH_LOGGER names a level).
import Fastify from 'fastify';
import { meResponseSchema, userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

// BENCH_LOGGER=info: Fastify's own request logs, JSON to stdout (which the driver discards).
const app = Fastify({ logger: process.env.BENCH_LOGGER ? { level: process.env.BENCH_LOGGER } : false });
app.get('/api/auth/me', { schema: { response: meResponseSchema } }, async (request, reply) => {
  const user = userFor(request.headers['x-user-id']);
  return user ? { user } : reply.code(401).send({ error: 'UNAUTHENTICATED' });
});
await app.ready();
await serveTarget(app.server, { close: () => app.close() });
