// docs/rules.md#the-edges-of-http case by case: what the fuzz found, each with its answer.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { send, sendRaw, type Target } from '../fuzz/transport.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

const code = (response: { json<T>(): T }) => response.json<{ code: string }>().code;

describe('numbers JavaScript reads and PostgreSQL refuses', () => {
  it('answers 400 VALIDATION_ERROR to non-finite and out-of-range ids and counts in the URL', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    for (const url of [
      '/api/employee/tasks?assigneeId=Infinity',
      '/api/employee/tasks?clientId=-Infinity',
      '/api/employee/tasks?limit=1e400',
      '/api/employee/tasks/1e400',
      '/api/employee/tasks/Infinity',
      '/api/employee/tasks/-0',
      '/api/employee/tasks/2147483648',
      '/api/employee/tasks/9007199254740993',
      '/api/employee/tasks/NaN',
    ]) {
      const response = await alice.get(url);
      assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
      assert.equal(code(response), 'VALIDATION_ERROR', url);
    }
  });

  it('answers 400 VALIDATION_ERROR to 1e400 in a bulk body', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    const response = await alice.request({
      method: 'PATCH',
      url: '/api/employee/tasks/bulk',
      headers: { 'content-type': 'application/json' },
      payload: '{"taskIds":[1,1e400],"assigneeId":2}',
    });
    assert.equal(response.statusCode, 400);
    assert.equal(code(response), 'VALIDATION_ERROR');
  });
});

describe('strings PostgreSQL refuses', () => {
  it('answers a login with U+0000 or a lone surrogate 400, the same for a known and an unknown email', async (t) => {
    const { client, app, close } = await createTestApp();
    t.after(close);
    // Bad input never reaches SQL: the account lookup is not even called.
    const users = app.services.login.password.accounts as { findCredentials: (email: string) => unknown };
    const original = users.findCredentials;
    let lookups = 0;
    users.findCredentials = (email: string) => {
      lookups++;
      return original.call(users, email);
    };
    t.after(() => {
      users.findCredentials = original;
    });
    const bodies: string[] = [];
    for (const [email, password] of [
      ['alice@example.com', 'demo\u0000password'],
      ['nobody@example.net', 'demo\u0000password'],
      ['alice\u0000@example.com', 'x'],
      ['\ud800@example.com', 'x'],
      ['alice@example.com', 'pass\udc00'],
    ] as const) {
      const response = await client().login(email, password);
      assert.equal(response.statusCode, 400, `${JSON.stringify(email)}: ${response.body}`);
      assert.equal(code(response), 'VALIDATION_ERROR');
      bodies.push(response.body);
    }
    assert.equal(bodies[0], bodies[1], 'a known and an unknown account get the same answer');
    assert.equal(lookups, 0, 'no login reached the database');
  });

  it('answers a cursor with U+0000 400', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    const response = await alice.get('/api/employee/tasks?cursor=%00');
    assert.equal(response.statusCode, 400);
    assert.equal(code(response), 'VALIDATION_ERROR');
  });
});

describe('client errors raised by plugins', () => {
  it('answers a Range beyond the page 416 RANGE_NOT_SATISFIABLE in our shape, not 500', async (t) => {
    const { app, close } = await createTestApp();
    t.after(close);
    const response = await app.inject({ method: 'GET', url: '/', headers: { range: 'bytes=99999999-' } });
    assert.equal(response.statusCode, 416);
    assert.equal(code(response), 'RANGE_NOT_SATISFIABLE');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
  });
});

describe('answers before routing, over a real keep-alive connection', () => {
  const listen = async (t: import('node:test').TestContext) => {
    const testApp = await createTestApp();
    t.after(testApp.close);
    await testApp.app.listen({ host: '127.0.0.1', port: 0 });
    const target: Target = { host: '127.0.0.1', port: (testApp.app.server.address() as AddressInfo).port };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    return { target, agent };
  };

  it('answers headers over 16 KiB 431 HEADERS_TOO_LARGE with nosniff and Connection: close, and the next request on the agent is answered', async (t) => {
    const { target, agent } = await listen(t);
    for (let round = 0; round < 3; round++) {
      const big = await send(agent, target, {
        method: 'GET',
        path: '/api/rate-limits',
        headers: { 'x-big': 'b'.repeat(20 * 1024) },
      });
      assert.equal(big.kind, 'answer', JSON.stringify(big));
      if (big.kind !== 'answer') return;
      assert.equal(big.answer.status, 431);
      assert.equal(JSON.parse(big.answer.body).code, 'HEADERS_TOO_LARGE');
      assert.equal(big.answer.headers['x-content-type-options'], 'nosniff');
      assert.equal(big.answer.headers.connection, 'close');
      const next = await send(agent, target, { method: 'GET', path: '/api/rate-limits' });
      assert.equal(next.kind, 'answer', `the request after the 431: ${JSON.stringify(next)}`);
    }
  });

  it('answers a malformed request line 400 BAD_REQUEST, after the answer to the request pipelined before it', async () => {
    const testApp = await createTestApp();
    try {
      await testApp.app.listen({ host: '127.0.0.1', port: 0 });
      const target = { host: '127.0.0.1', port: (testApp.app.server.address() as AddressInfo).port };
      const outcome = await sendRaw(
        target,
        Buffer.from('GET /api/rate-limits HTTP/1.1\r\nHost: x\r\n\r\nNOT HTTP\r\n\r\n'),
      );
      assert.deepEqual(
        outcome.answers.map((answer) => [answer.status, answer.headers.connection]),
        [
          [200, 'keep-alive'],
          [400, 'close'],
        ],
      );
      assert.equal(JSON.parse(outcome.answers[1]!.body).code, 'BAD_REQUEST');
      assert.equal(outcome.answers[1]!.headers['x-content-type-options'], 'nosniff');
      assert.equal(outcome.end, 'closed', 'a FIN, not a reset');
    } finally {
      await testApp.close();
    }
  });

  it('answers a bad chunk in a body 400 BAD_REQUEST at once', async (t) => {
    const { target } = await listen(t);
    const outcome = await sendRaw(
      target,
      Buffer.from(
        'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n',
      ),
    );
    assert.deepEqual(
      outcome.answers.map((answer) => [answer.status, JSON.parse(answer.body).code]),
      [[400, 'BAD_REQUEST']],
    );
  });

  it('gives a URL that cannot be decoded the security headers', async (t) => {
    const { target, agent } = await listen(t);
    const outcome = await send(agent, target, { method: 'GET', path: '/api/employee/tasks/%zz' });
    assert.equal(outcome.kind, 'answer');
    if (outcome.kind !== 'answer') return;
    assert.equal(outcome.answer.status, 400);
    assert.equal(JSON.parse(outcome.answer.body).code, 'VALIDATION_ERROR');
    assert.equal(outcome.answer.headers['x-content-type-options'], 'nosniff');
    assert.equal(outcome.answer.headers['cache-control'], 'no-store');
  });
});
