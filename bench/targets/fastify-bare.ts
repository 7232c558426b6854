// Target: Fastify with no limiter, the same route and answer.
import Fastify from 'fastify';
import { meResponseSchema, userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

const app = Fastify({ logger: false });
app.get('/api/auth/me', { schema: { response: meResponseSchema } }, async (request, reply) => {
  const user = userFor(request.headers['x-user-id']);
  return user ? { user } : reply.code(401).send({ error: 'UNAUTHENTICATED' });
});
await app.ready();
await serveTarget(app.server, { close: () => app.close() });
