// Headers every response carries: no sniffing, no framing, no referrer leaks, no caching of API data.
import fp from 'fastify-plugin';

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * The security headers of an answer to `url`. One source for the onSend hook and for the answers
 * written before any hook can run (a URL that cannot be decoded, a request Node's parser refused).
 */
export function securityHeaders(url: string): Record<string, string> {
  const headers: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
  if (url.startsWith('/api/')) headers['cache-control'] = 'no-store';
  else if (!url.startsWith('/docs')) headers['content-security-policy'] = CSP;
  return headers;
}

/** The three sets securityHeaders() answers, made once: the hook allocates nothing per request. */
const API_HEADERS = Object.entries(securityHeaders('/api/'));
const DOCS_HEADERS = Object.entries(securityHeaders('/docs'));
const PAGE_HEADERS = Object.entries(securityHeaders('/'));

export const securityHeadersPlugin = fp(
  async (app) => {
    app.addHook('onSend', (request, reply, payload, done) => {
      const url = request.url;
      const headers = url.startsWith('/api/')
        ? API_HEADERS
        : url.startsWith('/docs')
          ? DOCS_HEADERS
          : PAGE_HEADERS;
      for (const [name, value] of headers) {
        // A route's own caching decision (a 429's no-store, a static file's) stands.
        if (name !== 'cache-control' || !reply.hasHeader(name)) reply.header(name, value);
      }
      done(null, payload);
    });
  },
  { name: 'security-headers' },
);
