// Target: Fastify answering with what our rules ask of every answer, and nothing else: the floor under ours.
import Fastify from 'fastify';
import { budget, meResponseSchema, userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

/**
 * The nine headers ours sends on `GET /api/auth/me` (the API's security headers and the two
 * RateLimit forms, docs/rules.md#rate-limits), set one call each from the handler, with the RateLimit
 * values formatted per request from one running count, and one request line at info written by
 * Fastify's own logger (pino, to stdout) when the answer is sent: no session, no limiter, no
 * decision.
 *
 * What this prices: the part of ours' CPU per request that our rules and "request logs at the
 * default level" require of any implementation on Fastify, whatever its limiter.
 */
const app = Fastify({ logger: { level: 'info' }, disableRequestLogging: true });
app.addHook('onResponse', async (request, reply) => {
  request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
});

const limitHeader = String(budget.limit);
const policyHeader = `"api-authenticated";q=${budget.limit};w=${Math.ceil(budget.windowMs / 1000)}`;
let spent = 0;

app.get('/api/auth/me', { schema: { response: meResponseSchema } }, async (request, reply) => {
  const remaining = budget.limit - ++spent;
  reply
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .header('ratelimit-limit', limitHeader)
    .header('ratelimit-remaining', remaining)
    .header('ratelimit-reset', 0)
    .header('ratelimit-policy', policyHeader)
    .header('ratelimit', `"api-authenticated";r=${remaining};t=0`);
  const user = userFor(request.headers['x-user-id']);
  return user ? { user } : reply.code(401).send({ error: 'UNAUTHENTICATED' });
});
await app.ready();
await serveTarget(app.server, { close: () => app.close() });
