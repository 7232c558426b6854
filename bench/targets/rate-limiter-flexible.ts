// Target: Fastify + rate-limiter-flexible in an onRequest hook, in memory or in Redis (BENCH_STORE).
import Fastify from 'fastify';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { budget, meResponseSchema, redisClient, redisPrefix, storeKind, userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

const redis = storeKind === 'redis' ? redisClient() : undefined;
const options = { points: budget.limit, duration: Math.ceil(budget.windowMs / 1000), keyPrefix: redisPrefix };
const limiter = redis
  ? new RateLimiterRedis({ ...options, storeClient: redis })
  : new RateLimiterMemory(options);

const app = Fastify({ logger: false });
app.addHook('onRequest', async (request, reply) => {
  const key = String(request.headers['x-user-id']);
  try {
    const result = await limiter.consume(key);
    reply.headers(limitHeaders(result));
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    const retryAfter = Math.ceil(error.msBeforeNext / 1000);
    return reply
      .code(429)
      .headers({ ...limitHeaders(error), 'retry-after': retryAfter })
      .send({ error: 'RATE_LIMITED', retryAfter });
  }
});
app.get('/api/auth/me', { schema: { response: meResponseSchema } }, async (request, reply) => {
  const user = userFor(request.headers['x-user-id']);
  return user ? { user } : reply.code(401).send({ error: 'UNAUTHENTICATED' });
});

function limitHeaders(result: RateLimiterRes): Record<string, number> {
  return {
    'ratelimit-limit': budget.limit,
    'ratelimit-remaining': result.remainingPoints,
    'ratelimit-reset': Math.ceil(result.msBeforeNext / 1000),
  };
}

await app.ready();
await serveTarget(app.server, {
  close: async () => {
    await app.close();
    redis?.disconnect();
  },
});
