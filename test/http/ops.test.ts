// Operational routes (docs/rules.md#running-it): liveness, readiness, the OpenAPI document.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { READINESS_MAX_AGE_MS } from '../../src/http/readiness.ts';
import { localStack } from '../../src/rate-limit/stores/create-store.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { createTestApp } from '../helpers/app.ts';
import { appWithClosableDatabase } from '../helpers/broken-app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { scrapeMetrics } from '../helpers/metrics.ts';

after(closeTestDatabases);

describe('GET /healthz', () => {
  it('answers 200 while the process runs', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    assert.equal((await client().get('/healthz')).statusCode, 200);
  });
});

describe('GET /readyz', () => {
  it('answers 200 {status: ok, database: up} and is not cached', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const response = await client().get('/readyz');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'ok', database: 'up' });
    assert.equal(response.headers['cache-control'], 'no-store');
  });

  it('answers 503 naming the database as down once the database is closed, while /healthz stays 200', async (t) => {
    const broken = await appWithClosableDatabase();
    t.after(broken.close);
    assert.equal((await broken.client().get('/readyz')).statusCode, 200);
    await broken.database.close();
    broken.clock.advance(READINESS_MAX_AGE_MS); // the next look at the dependencies is due
    const response = await broken.client().get('/readyz');
    assert.equal(response.statusCode, 503);
    assert.equal(response.json().database, 'down');
    assert.notEqual(response.json().status, 'ok');
    assert.equal((await broken.client().get('/healthz')).statusCode, 200);
  });
});

describe('instance_ready in /metrics', () => {
  it('is 1 while /readyz answers 200, and 0 once the database is away, before any request asks', async (t) => {
    const broken = await appWithClosableDatabase();
    t.after(broken.close);
    assert.match(await scrapeMetrics(broken.app), /^instance_ready 1$/m);
    await broken.database.close();
    broken.clock.advance(READINESS_MAX_AGE_MS);
    // The scrape itself looks at the dependencies (the look /readyz shares, once a second at most).
    const metrics = await scrapeMetrics(broken.app);
    assert.match(metrics, /^instance_ready 0$/m);
    assert.equal((await broken.client().get('/readyz')).statusCode, 503);
  });
});

describe('GET /readyz under a flood', () => {
  it('asks the database and each dependency at most once a second, however many callers ask', async (t) => {
    const clock = new ManualClock();
    let redisChecks = 0;
    const stack = {
      ...localStack(new MemoryStore({ clock, sweepIntervalMs: 0 })),
      readiness: [
        {
          name: 'redis',
          check: async () => {
            redisChecks++;
            return { state: 'up', fatal: false };
          },
        },
      ],
    };
    const { app, database, close } = await createTestApp({ clock, stack });
    t.after(close);
    let databaseChecks = 0;
    const query = database.db.query;
    database.db.query = ((sql: string, params?: readonly unknown[]) => {
      if (sql === 'SELECT 1') databaseChecks++;
      return query.call(database.db, sql, params);
    }) as typeof query;
    t.after(() => {
      database.db.query = query;
    });
    const ask = () => app.inject({ method: 'GET', url: '/readyz', remoteAddress: '198.51.100.60' });

    const flood = await Promise.all(Array.from({ length: 200 }, ask));
    for (let i = 0; i < 50; i++) flood.push(await ask());
    clock.advance(READINESS_MAX_AGE_MS - 1);
    flood.push(await ask());
    assert.deepEqual(
      new Set(flood.map((response) => `${response.statusCode} ${response.body}`)),
      new Set(['200 {"status":"ok","database":"up","redis":"up"}']),
    );
    assert.match(await scrapeMetrics(app), /^instance_ready 1$/m);
    assert.deepEqual([databaseChecks, redisChecks], [1, 1], '251 answers and a scrape, one look');
    clock.advance(1);
    assert.equal((await ask()).statusCode, 200);
    assert.deepEqual([databaseChecks, redisChecks], [2, 2], 'a second later, one more look');
  });
});

describe('GET /docs/json', () => {
  it('is an OpenAPI 3 document listing every /api route of docs/rules.md#endpoints', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const response = await client().get('/docs/json');
    assert.equal(response.statusCode, 200);
    const document = response.json<{ openapi: string; paths: Record<string, Record<string, unknown>> }>();
    assert.match(document.openapi, /^3\./);
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const contract = [
      'GET /api/csrf-token',
      'POST /api/auth/login',
      'POST /api/auth/logout',
      'GET /api/auth/me',
      'GET /api/employee/tasks',
      'GET /api/employee/tasks/{id}',
      'GET /api/employee/employees',
      'GET /api/employee/clients',
      'PATCH /api/employee/tasks/bulk',
      'GET /api/rate-limits',
      'POST /api/admin/login-locks/reset',
      'GET /api/admin/login-locks',
      // Beyond docs/rules.md#endpoints table: the admin page's view of the login gate (docs/rules.md#the-login-gate, docs/operations.md).
      'GET /api/admin/login-pressure',
      'GET /api/admin/security-events',
      'POST /api/auth/passkey/options',
      'POST /api/auth/passkey/login',
      'GET /api/auth/passkeys',
      'POST /api/auth/passkeys/registration-options',
      'POST /api/auth/passkeys',
      // Beyond docs/rules.md#endpoints table: naming a passkey (docs/rules.md#passkeys).
      'PATCH /api/auth/passkeys/{id}',
      'DELETE /api/auth/passkeys/{id}',
      // Accounts (docs/rules.md#accounts).
      'POST /api/auth/password',
      'GET /api/auth/sessions',
      'DELETE /api/auth/sessions/{id}',
      'POST /api/auth/sessions/end-others',
      'GET /api/auth/devices',
      'DELETE /api/auth/devices/{id}',
      'GET /api/auth/security-events',
      'GET /api/admin/users',
      'POST /api/admin/users',
      'PATCH /api/admin/users/{id}',
      'POST /api/admin/users/{id}/password-reset',
      'GET /api/admin/users/{id}/passkeys',
      'DELETE /api/admin/users/{id}/passkeys/{passkeyId}',
      // Tasks (docs/rules.md#tasks).
      'POST /api/employee/tasks',
      'PATCH /api/employee/tasks/{id}',
      'GET /api/employee/tasks/{id}/history',
      'POST /api/admin/clients',
      'PATCH /api/admin/clients/{id}',
      // Export and import (docs/rules.md#export-and-import).
      'GET /api/employee/tasks/export',
      'POST /api/employee/tasks/import',
    ];
    for (const route of contract) assert.ok(routes.includes(route), `${route} is documented`);
    assert.deepEqual(routes.filter((route) => route.includes(' /api')).sort(), [...contract].sort());
  });

  it('serves the documentation UI at /docs', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const response = await client().get('/docs/');
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /text\/html/);
  });
});
