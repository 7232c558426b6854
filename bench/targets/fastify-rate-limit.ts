// Target: Fastify + @fastify/rate-limit keyed by user id, in memory or in Redis (BENCH_STORE).
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { budget, meResponseSchema, redisClient, redisPrefix, storeKind, userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

const redis = storeKind === 'redis' ? redisClient() : undefined;
const app = Fastify({ logger: false });
await app.register(rateLimit, {
  max: budget.limit,
  timeWindow: budget.windowMs,
  keyGenerator: (request) => String(request.headers['x-user-id']),
  // Above the user count, so the LRU never forgets a counter during the run.
  cache: 10_000,
  ...(redis ? { redis, nameSpace: redisPrefix } : {}),
});
app.get('/api/auth/me', { schema: { response: meResponseSchema } }, async (request, reply) => {
  const user = userFor(request.headers['x-user-id']);
  return user ? { user } : reply.code(401).send({ error: 'UNAUTHENTICATED' });
});
await app.ready();
await serveTarget(app.server, {
  close: async () => {
    await app.close();
    redis?.disconnect();
  },
});
