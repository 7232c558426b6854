// A client generated from the served OpenAPI document drives the real service.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { after, describe, it, type TestContext } from 'node:test';
import fetchCookie from 'fetch-cookie';
import createClient from 'openapi-fetch';
import { ERRORS, type ErrorCode } from '../../src/errors.ts';
import { planForRoute } from '../../src/rate-limit/policy.ts';
import type { paths } from '../generated/openapi.d.ts';
import { createTestApp, DEMO_PASSWORD } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { GENERATED_TYPES, typesOf } from '../helpers/openapi-types.ts';

after(closeTestDatabases);

interface SecurityScheme {
  readonly type: string;
  readonly in: 'cookie' | 'header';
  readonly name: string;
}

interface ServedResponse {
  readonly headers?: Record<string, { required?: boolean }>;
  readonly content?: { 'application/json'?: { schema: ErrorBody } };
}

/** An error response's schema: the shared Error, then one branch or a `oneOf` of them, each with its codes. */
interface ErrorBody {
  readonly allOf?: [{ $ref: string }, Branch & { oneOf?: Branch[] }];
}
interface Branch {
  readonly properties?: { code?: { enum?: ErrorCode[] } };
}

interface ServedDocument {
  readonly components: { readonly securitySchemes: Record<string, SecurityScheme> };
  readonly paths: Record<
    string,
    Record<string, { security?: Record<string, string[]>[]; responses: Record<string, ServedResponse> }>
  >;
}

/** The service on a free port, its document as served, and a generated client with a cookie jar. */
async function generatedClient(t: TestContext, env: Record<string, string> = {}) {
  const testApp = await createTestApp({ env });
  t.after(testApp.close);
  await testApp.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
  const document = (await (await fetch(`${baseUrl}/docs/json`)).json()) as ServedDocument;
  const cookieFetch = fetchCookie(fetch);
  const api = createClient<paths>({ baseUrl, fetch: cookieFetch });
  const cookie = async (name: string) =>
    (await cookieFetch.cookieJar.getCookieString(baseUrl)).split('; ').find((c) => c.startsWith(`${name}=`));
  return { api, document, cookie };
}

/** The names the document gives a response's headers: a name it drops fails to compile here. */
type HeadersOf<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { headers: infer H } };
}
  ? keyof H & string
  : never;

const BULK_429_HEADERS: HeadersOf<'/api/employee/tasks/bulk', 'patch', 429>[] = [
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];

describe('a client generated from the OpenAPI document', () => {
  it('is the client these tests compile against: the served document makes the committed types', async (t) => {
    const { document } = await generatedClient(t);
    const fresh = await typesOf(document);
    const committed = await readFile(GENERATED_TYPES, 'utf8');
    assert.ok(
      fresh === committed,
      'the OpenAPI document changed: run `npm run openapi:types` and check the types and this test still agree',
    );
  });

  it('declares the session cookie and the CSRF header, and which operations need them', async (t) => {
    const { document } = await generatedClient(t);
    const schemes = document.components.securitySchemes;
    assert.deepEqual(
      Object.values(schemes).map(({ type, in: place, name }) => `${type} ${place} ${name}`),
      ['apiKey cookie tp_session', 'apiKey header x-csrf-token', 'apiKey cookie tp_csrf'],
    );
    const security = (path: string, method: string) => document.paths[path]?.[method]?.security;
    assert.deepEqual(security('/api/auth/login', 'post'), [{ csrfToken: [], csrfCookie: [] }]);
    assert.deepEqual(security('/api/employee/tasks/bulk', 'patch'), [{ session: [], csrfToken: [] }]);
    assert.deepEqual(security('/api/employee/tasks', 'get'), [{ session: [] }]);
    assert.deepEqual(security('/api/csrf-token', 'get'), [{}, { session: [] }]);
    // Every unsafe operation asks for the CSRF header.
    for (const [path, methods] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(methods))
        if (['post', 'put', 'patch', 'delete'].includes(method))
          assert.ok(
            operation.security?.every((requirement) => 'csrfToken' in requirement),
            `${method.toUpperCase()} ${path} requires the CSRF header`,
          );
  });

  it('gives every error the shared body with the codes of its status, and every limited answer its headers', async (t) => {
    const { document } = await generatedClient(t);
    const rateLimitHeaders = [
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'RateLimit-Policy',
      'RateLimit',
    ];
    for (const [path, methods] of Object.entries(document.paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const [method, operation] of Object.entries(methods)) {
        const plan = planForRoute(method.toUpperCase(), path.replace(/\{(\w+)\}/g, ':$1'));
        for (const [status, response] of Object.entries(operation.responses)) {
          const where = `${method.toUpperCase()} ${path} ${status}`;
          const headers = response.headers ?? {};
          assert.equal(headers['Cache-Control']?.required, true, `${where}: Cache-Control`);
          if (status === '429' || status === '503')
            assert.equal(headers['Retry-After']?.required, true, `${where}: Retry-After`);
          const limited =
            plan.kind === 'generic' ||
            plan.kind === 'controls' ||
            (plan.kind === 'login' && status === '429');
          for (const name of rateLimitHeaders) {
            assert.equal(
              name in headers,
              limited,
              `${where}: ${name} ${limited ? 'documented' : 'not sent'}`,
            );
            if (status === '429') assert.equal(headers[name]?.required, true, `${where}: ${name} required`);
          }
          if (Number(status) < 400) continue;
          const schema = response.content?.['application/json']?.schema;
          assert.equal(
            schema?.allOf?.[0].$ref,
            '#/components/schemas/Error',
            `${where}: the shared error body`,
          );
          const second = schema!.allOf![1];
          const codes = (second.oneOf ?? [second]).flatMap((branch) => branch.properties?.code?.enum ?? []);
          assert.ok(codes.length > 0, `${where}: names its codes`);
          for (const code of codes) assert.equal(ERRORS[code].status, Number(status), `${where}: ${code}`);
        }
      }
    }
  });

  it('gets a CSRF token, signs in, lists, reassigns in bulk, and reads a 429 through the documented headers', async (t) => {
    const { api, document, cookie } = await generatedClient(t, { RATE_LIMIT_BULK: '2/1m' });
    const { session, csrfToken, csrfCookie } = document.components.securitySchemes;
    // The header and cookie names come from the document's security schemes.
    const csrfHeader = (token: string) => ({ [csrfToken!.name]: token });

    const bootstrap = await api.GET('/api/csrf-token');
    assert.equal(bootstrap.response.status, 200);
    assert.ok(bootstrap.data?.csrfToken);
    assert.ok(await cookie(csrfCookie!.name), 'the pre-session cookie is kept');

    const refused = await api.POST('/api/auth/login', {
      body: { email: 'alice@example.com', password: DEMO_PASSWORD },
    });
    assert.equal(refused.response.status, 403);
    assert.equal(refused.error?.code, 'CSRF_INVALID');

    const login = await api.POST('/api/auth/login', {
      body: { email: 'alice@example.com', password: DEMO_PASSWORD },
      headers: csrfHeader(bootstrap.data.csrfToken),
    });
    assert.equal(login.response.status, 200, JSON.stringify(login.error));
    assert.equal(login.data?.user.email, 'alice@example.com');
    assert.ok(await cookie(session!.name), 'the session cookie is kept');
    const token = login.data.csrfToken;

    const list = await api.GET('/api/employee/tasks', { params: { query: { limit: 5, status: 'open' } } });
    assert.equal(list.response.status, 200);
    assert.equal(list.data?.tasks.length, 5);
    assert.ok(list.data.tasks.every((task) => task.status === 'open'));
    const clients = await api.GET('/api/employee/clients');
    assert.deepEqual(
      clients.data?.clients.map((client) => client.name),
      ['Globex Corporation', 'Initech', 'Northwind Traders'],
    );

    const taskIds = list.data.tasks.map((task) => task.id);
    const bulk = await api.PATCH('/api/employee/tasks/bulk', {
      body: { taskIds, assigneeId: 2 },
      headers: csrfHeader(token),
    });
    assert.equal(bulk.response.status, 200);
    assert.deepEqual([bulk.data?.succeeded, bulk.data?.failed], [5, 0]);

    const tooLarge = await api.PATCH('/api/employee/tasks/bulk', {
      body: { taskIds: Array.from({ length: 51 }, (_, i) => i + 1), assigneeId: 2 },
      headers: csrfHeader(token),
    });
    assert.equal(tooLarge.response.status, 400);
    // The document ties `max` to this code: the generated type narrows to it.
    assert.equal(tooLarge.error?.code === 'TASK_BULK_TOO_LARGE' && tooLarge.error.max, 50);

    const limited = await api.PATCH('/api/employee/tasks/bulk', {
      body: { taskIds, assigneeId: 3 },
      headers: csrfHeader(token),
    });
    assert.equal(limited.response.status, 429);
    assert.equal(limited.error?.code, 'TASK_BULK_RATE_LIMIT');
    const headers = Object.fromEntries(
      BULK_429_HEADERS.map((name) => [name, limited.response.headers.get(name)]),
    );
    const retryAfter = Number(headers['Retry-After']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${headers['Retry-After']}`);
    assert.equal(limited.error.retryAfter, retryAfter);
    assert.deepEqual(headers, {
      'Retry-After': String(retryAfter),
      RateLimit: `"task-bulk";r=0;t=${retryAfter}`,
      'RateLimit-Policy': '"task-bulk";q=2;w=60',
      'RateLimit-Limit': '2',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': String(retryAfter),
    });
  });
});
