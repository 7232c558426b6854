// Headers every response carries: no sniffing, no framing, no referrer leaks, no caching of API data.
import fp from 'fastify-plugin';

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export const securityHeadersPlugin = fp(
  async (app) => {
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.header('x-content-type-options', 'nosniff');
      reply.header('x-frame-options', 'DENY');
      reply.header('referrer-policy', 'no-referrer');
      if (request.url.startsWith('/api/')) {
        if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      } else if (!request.url.startsWith('/docs')) {
        reply.header('content-security-policy', CSP);
      }
      done(null, payload);
    });
  },
  { name: 'security-headers' },
);
