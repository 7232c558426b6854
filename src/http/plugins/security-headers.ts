// Headers every response carries: no sniffing, no framing, no referrer leaks, no caching of API data.
import fp from 'fastify-plugin';

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const COMMON = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};
const API_HEADERS = Object.freeze({ ...COMMON, 'cache-control': 'no-store' });
const DOCS_HEADERS = Object.freeze(COMMON);
const PAGE_HEADERS = Object.freeze({ ...COMMON, 'content-security-policy': CSP });

/**
 * The security headers of an answer to `url`: `/api`, `/api/…` and `/api?…` are the API (404s
 * included), `/docs` has its own scripts, the rest is the page. One source for the hook and for the
 * answers written before any hook can run (a URL that cannot be decoded, a request Node's parser
 * refused).
 */
export function securityHeaders(url: string): Readonly<Record<string, string>> {
  if (url.startsWith('/api') && (url.length === 4 || url[4] === '/' || url[4] === '?')) return API_HEADERS;
  return url.startsWith('/docs') ? DOCS_HEADERS : PAGE_HEADERS;
}

export const securityHeadersPlugin = fp(
  async (app) => {
    // The first onRequest hook rather than an onSend one: headers set early stay on every answer
    // (a 429's, an error's), and a route's own caching decision (a static file's) set later
    // replaces ours.
    app.addHook('onRequest', (request, reply, done) => {
      reply.headers(securityHeaders(request.url));
      done();
    });
  },
  { name: 'security-headers' },
);
