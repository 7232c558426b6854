// Headers every response carries: no sniffing, no framing, no referrer leaks, no caching of API data.
import fp from 'fastify-plugin';

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const COMMON = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** One set of headers, as an object (for `reply.headers`) and as a list of pairs (for the hook). */
interface HeaderSet {
  readonly headers: Readonly<Record<string, string>>;
  readonly pairs: readonly (readonly [string, string])[];
}

function headerSet(headers: Record<string, string>): HeaderSet {
  return { headers: Object.freeze(headers), pairs: Object.entries(headers) };
}

const API = headerSet({ ...COMMON, 'cache-control': 'no-store' });
const DOCS = headerSet({ ...COMMON });
const PAGE = headerSet({ ...COMMON, 'content-security-policy': CSP });

/** `/api`, `/api/…` and `/api?…` are the API (404s included), `/docs` has its own scripts, the rest is the page. */
function setFor(url: string): HeaderSet {
  if (url.startsWith('/api') && (url.length === 4 || url[4] === '/' || url[4] === '?')) return API;
  return url.startsWith('/docs') ? DOCS : PAGE;
}

/**
 * The security headers of an answer to `url`. One source for the hook and for the answers written
 * before any hook can run (a URL that cannot be decoded, a request Node's parser refused).
 */
export function securityHeaders(url: string): Readonly<Record<string, string>> {
  return setFor(url).headers;
}

export const securityHeadersPlugin = fp(
  async (app) => {
    // The first onRequest hook rather than an onSend one: headers set early stay on every answer
    // (a 429's, an error's), and a route's own caching decision (a static file's) set later
    // replaces ours. One `reply.header` call per pair: `reply.headers` reads an object's keys
    // through megamorphic lookups (measured: BENCHMARKS.md).
    app.addHook('onRequest', (request, reply, done) => {
      const { pairs } = setFor(request.url);
      for (let i = 0; i < pairs.length; i++) reply.header(pairs[i]![0], pairs[i]![1]);
      done();
    });
  },
  { name: 'security-headers' },
);
