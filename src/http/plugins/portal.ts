// Serves the portal's production build (web/dist) at /; without a build, / says how to make one.
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where `npm run build` (or `npm run build:web`) writes the bundle. */
export const PORTAL_ROOT = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

export interface PortalOptions {
  /** The built portal; defaults to web/dist. */
  readonly root?: string;
}

export async function portalPlugin(
  app: FastifyInstance,
  { root = PORTAL_ROOT }: PortalOptions,
): Promise<void> {
  if (!existsSync(join(root, 'index.html'))) {
    app.log.warn('the portal is not built (web/dist is missing): run `npm run build`');
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The portal is not built. Run `npm run build` (npm ci does it for you).\n'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    // One route per built file, found at start: no catch-all route, so an unknown /api path still
    // reaches the API's 404 (and its rate limit) instead of being looked up on disk.
    wildcard: false,
    // The build writes .br and .gz copies: sent as they are to clients that accept them.
    preCompressed: true,
    globIgnore: ['**/*.br', '**/*.gz'],
    // `/` is routed below: the plugin's own index route misses the precompressed copies.
    index: false,
    cacheControl: false,
    setHeaders(reply, path) {
      // Vite puts a content hash in every asset's name; index.html must be revalidated to find new ones.
      const hashed = relative(root, path).startsWith(`assets${sep}`);
      reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.sendFile('/index.html'));
}
