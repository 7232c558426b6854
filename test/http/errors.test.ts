// Error responses (docs/rules.md#conventions): 404s under /api, 500s that show nothing, one shape.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ERRORS } from '../../src/errors.ts';
import { createTestApp } from '../helpers/app.ts';
import { appWithClosableDatabase } from '../helpers/broken-app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';

after(closeTestDatabases);

describe('the error table', () => {
  it('gives every code an UPPER_SNAKE name, an error status and a sentence', () => {
    for (const [code, { status, message }] of Object.entries(ERRORS)) {
      assert.match(code, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      assert.ok(status >= 400 && status <= 599, code);
      assert.match(message, /^[A-Z].*\.$/, code);
    }
  });
});

describe('unknown paths', () => {
  it('answers 404 NOT_FOUND with {code, message} to any method on a path under /api that matches no route', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const anonymous = client();
    for (const [method, url] of [
      ['GET', '/api/nope'],
      ['GET', '/api'],
      ['POST', '/api/employee/nope'],
      ['DELETE', '/api/employee/tasks/1'],
      ['GET', '/api/employee/tasks/1/extra'],
    ] as const) {
      const body = assertError(await anonymous.request({ method, url }), 404, 'NOT_FOUND');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'message']);
    }
  });

  it('answers 400 VALIDATION_ERROR in the same shape to a URL that cannot be decoded', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    for (const url of [
      '/api/%zz',
      '/api/employee/tasks/%E0%A4%A',
      `/api/employee/tasks/${'9'.repeat(300)}`,
    ]) {
      assertError(await client().get(url), 400, 'VALIDATION_ERROR');
    }
  });
});

describe('server errors', () => {
  it('answers 500 INTERNAL_ERROR with only code and message when the database is gone', async (t) => {
    const broken = await appWithClosableDatabase();
    t.after(broken.close);
    const alice = broken.client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const anonymous = broken.client();
    await anonymous.fetchCsrf();
    await broken.database.close();

    const responses = [
      await alice.get('/api/employee/tasks'),
      await anonymous.request({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: 'alice@example.com', password: 'demo-password' },
      }),
    ];
    for (const response of responses) {
      const body = assertError(response, 500, 'INTERNAL_ERROR');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'message']);
      assert.equal(body.message, ERRORS.INTERNAL_ERROR.message);
      assert.doesNotMatch(response.body, /PGlite|closed|at .*\.ts|stack|sql/i);
    }
  });
});

describe('every error response', () => {
  it('has a string code and a string message', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '3/1m' } });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    const anonymous = client();
    await anonymous.fetchCsrf();
    const responses = [
      await alice.get('/api/employee/tasks?limit=0'),
      await alice.get('/api/employee/tasks/9999'),
      await alice.request({
        method: 'PATCH',
        url: '/api/employee/tasks/bulk',
        payload: { taskIds: [1], assigneeId: 4 },
      }),
      await alice.request({
        method: 'POST',
        url: '/api/admin/login-locks/reset',
        payload: { email: 'a@b.c' },
      }),
      await alice.request({ method: 'POST', url: '/api/auth/logout', headers: { 'x-csrf-token': 'x' } }),
      await alice.request({
        method: 'PATCH',
        url: '/api/employee/tasks/bulk',
        payload: 'x',
        headers: { 'content-type': 'text/plain' },
      }),
      await client().login('alice@example.com', 'wrong'),
      await client().get('/api/employee/employees'),
      ...(await Promise.all([1, 2, 3, 4].map(() => anonymous.get('/api/auth/me')))), // 4 > 3/1m: a 429
    ];
    const statuses = new Set<number>();
    for (const response of responses) {
      assert.ok(response.statusCode >= 400, response.body);
      statuses.add(response.statusCode);
      const body = response.json();
      assert.equal(typeof body.code, 'string', response.body);
      assert.equal(typeof body.message, 'string', response.body);
      assert.ok(body.code in ERRORS, `${body.code} is in the error table`);
      assert.equal(response.statusCode, ERRORS[body.code as keyof typeof ERRORS].status);
    }
    assert.deepEqual([...statuses].sort(), [400, 401, 403, 404, 415, 422, 429]);
  });
});
