// Target: raw node:http answering the same JSON, with no limiter — the ceiling of this machine.
import { createServer } from 'node:http';
import { userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

/**
 * BENCH_OUR_HEADERS=1 (bench/header-cost.ts): the same answer with the nine headers ours adds to
 * it (security headers and the two RateLimit forms, at the bench's budget), to price them alone.
 */
const extraHeaders: Record<string, string> =
  process.env.BENCH_OUR_HEADERS === '1'
    ? {
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
        'ratelimit-limit': '999999999',
        'ratelimit-remaining': '999998765',
        'ratelimit-reset': '0',
        'ratelimit-policy': '"api-authenticated";q=999999999;w=900',
        ratelimit: '"api-authenticated";r=999998765;t=0',
      }
    : {};

const server = createServer((request, response) => {
  const user =
    request.method === 'GET' && request.url === '/api/auth/me' ? userFor(request.headers['x-user-id']) : null;
  const body = JSON.stringify(user ? { user } : { error: 'UNAUTHENTICATED' });
  response.writeHead(user ? 200 : 401, {
    ...extraHeaders,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
});

await serveTarget(server);
