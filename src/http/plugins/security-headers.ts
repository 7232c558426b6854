// Headers every response carries: no sniffing, no framing, no referrer leaks, no caching of API data.
import type { FastifyReply } from 'fastify';
import fp from 'fastify-plugin';

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * The security headers of an answer to `url`. One source for the request step and for the answers
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

/**
 * The header set of every request a route answers, when its pattern settles it (a pattern with no
 * parameter or wildcard, or one under /api or /docs); null when only the request's URL can tell.
 */
function headerSetOfRoute(url: string): readonly [string, string][] | null {
  if (url === '/api' || url.startsWith('/api/') || url.startsWith('/docs')) return headerSetFor(url);
  return url.includes(':') || url.includes('*') ? null : headerSetFor(url);
}

function setAll(reply: FastifyReply, headers: readonly [string, string][]): undefined {
  for (let i = 0; i < headers.length; i++) reply.header(headers[i]![0], headers[i]![1]);
  return undefined;
}

export const securityHeadersPlugin = fp(
  async (app) => {
    // The first step of every request rather than an onSend hook: headers set early stay on every
    // answer (an error's too), and a route's own caching decision (a 429's no-store, a static
    // file's) is set later and replaces ours.
    app.requestPipeline.add((route) => {
      const fixed = route ? headerSetOfRoute(route.url) : null;
      if (fixed) return (_request, reply) => setAll(reply, fixed);
      return (request, reply) => setAll(reply, headerSetFor(request.url));
    });
  },
  { name: 'security-headers', dependencies: ['request-pipeline'] },
);
