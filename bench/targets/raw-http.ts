// Target: raw node:http answering the same JSON, with no limiter — the ceiling of this machine.
import { createServer } from 'node:http';
import { userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

const server = createServer((request, response) => {
  const user =
    request.method === 'GET' && request.url === '/api/auth/me' ? userFor(request.headers['x-user-id']) : null;
  const body = JSON.stringify(user ? { user } : { error: 'UNAUTHENTICATED' });
  response.writeHead(user ? 200 : 401, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
});

await serveTarget(server);
