// The OpenAPI 3 document, built from the route schemas and what each route answers, served at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { documentedSchema, liftRequiredHeaders, SECURITY_SCHEMES } from '../openapi-answers.ts';

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Task portal API',
        version: '1.0.0',
        description:
          'Every unsafe /api request needs `x-csrf-token` (from GET /api/csrf-token). Limited routes answer with ' +
          'RateLimit-Limit/-Remaining/-Reset, RateLimit-Policy and RateLimit headers; 429s and 503s add Retry-After.',
      },
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    // Shared schemas are named by their $id (User, Task, …), as generated clients will call them.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => ({ schema: documentedSchema({ ...route, schema }), url }),
    transformObject: (documents) => {
      const document = 'openapiObject' in documents ? documents.openapiObject : documents.swaggerObject;
      liftRequiredHeaders(document as Parameters<typeof liftRequiredHeaders>[0]);
      return document;
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}
