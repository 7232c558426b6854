// The OpenAPI 3 document, built from the route schemas, served with its UI at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Task portal API',
        version: '1.0.0',
        description:
          'Every unsafe /api request needs `x-csrf-token` (from GET /api/csrf-token). Limited routes answer with ' +
          'RateLimit-Limit/-Remaining/-Reset, RateLimit-Policy and RateLimit headers; 429s add Retry-After.',
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}
