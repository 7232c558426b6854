// Headers every response carries: no sniffing, no framing, no referrer leaks, no caching of API data.
import fp from 'fastify-plugin';

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * The security headers of an answer to `url`. One source for the onSend hook and for the answers
 * written before any hook can run (a URL that cannot be decoded, a request Node's parser refused).
 */
export function securityHeaders(url: string): Record<string, string> {
  return Object.fromEntries(headerSetFor(url));
}

const COMMON = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};
/** The three sets, made once: the hook allocates nothing per request. */
const API_HEADERS = Object.entries({ ...COMMON, 'cache-control': 'no-store' });
const DOCS_HEADERS = Object.entries(COMMON);
const PAGE_HEADERS = Object.entries({ ...COMMON, 'content-security-policy': CSP });

/** `/api`, `/api/…` and `/api?…` are the API (404s included); `/docs` has its own scripts; the rest is the page. */
function headerSetFor(url: string): readonly [string, string][] {
  if (url.startsWith('/api') && (url.length === 4 || url[4] === '/' || url[4] === '?')) return API_HEADERS;
  return url.startsWith('/docs') ? DOCS_HEADERS : PAGE_HEADERS;
}

export const securityHeadersPlugin = fp(
  async (app) => {
    // Set as the request arrives rather than in an onSend hook: headers set early stay on every
    // answer (an error's too), and a route's own caching decision (a 429's no-store, a static
    // file's) is set later and replaces ours.
    app.addHook('onRequest', (request, reply, done) => {
      for (const [name, value] of headerSetFor(request.url)) reply.header(name, value);
      done();
    });
  },
  { name: 'security-headers' },
);
