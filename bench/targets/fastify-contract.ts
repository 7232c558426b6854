// Target: Fastify answering with what the contract asks of every answer, and nothing else: the floor under ours.
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { RequestLogController } from '../../src/http/request-log.ts';
import { budget, meResponseSchema, userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

/**
 * The nine headers ours sends on `GET /api/auth/me` (the API's security headers and the two
 * RateLimit forms, api-contract.md §5), set one call each from the handler, with the RateLimit
 * values formatted per request from one running count: no session, no limiter, no decision. With
 * BENCH_CONTRACT_LOGS=1 it also writes one request line per answer at info, as ours does
 * (src/http/request-log.ts, on pino's default stdout).
 *
 * What this prices: the part of ours' CPU per request that the contract and the issue's "request
 * logs at the default level" require of any implementation on Fastify, whatever its limiter.
 */
const withLogs = process.env.BENCH_CONTRACT_LOGS === '1';
const logger = withLogs ? pino({ level: 'info' }) : null;
const app = Fastify(
  logger
    ? { loggerInstance: logger as FastifyBaseLogger, logController: new RequestLogController() }
    : { logger: false },
);

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
