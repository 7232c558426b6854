// Two instances behind the shipped nginx: addresses, no 502, nginx's refusals in the API's shape.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { ERRORS, type ErrorCode, errorBody } from '../../src/errors.ts';
import { securityHeaders } from '../../src/http/plugins/security-headers.ts';
import { type Answer, send, sendRaw, type Target } from '../fuzz/transport.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { type Nginx, SHIPPED_NGINX_CONF, skipUnlessNginx, startNginx } from '../helpers/nginx.ts';
import { freePort } from '../helpers/redis-server.ts';

/** Distinct clients: nginx sees each loopback source address as its own $remote_addr. */
const ALICE_ADDRESS = '127.0.0.2';
const BOB_ADDRESS = '127.0.0.3';
const MALLORY_ADDRESS = '127.0.0.4';
const UNAUTHENTICATED_BUDGET = 5;

const skip = skipUnlessNginx();

/** The statuses nginx answers by itself and the API code each stands for, as deploy/nginx.conf maps them. */
const NGINX_OWN: readonly [number, ErrorCode][] = [
  [400, 'BAD_REQUEST'],
  [404, 'NOT_FOUND'],
  [408, 'REQUEST_TIMEOUT'],
  [413, 'PAYLOAD_TOO_LARGE'],
  [431, 'HEADERS_TOO_LARGE'],
  [503, 'SERVICE_UNAVAILABLE'],
  [504, 'GATEWAY_TIMEOUT'],
];

/** Asserts one of nginx's own refusals: the API's status, body and /api headers, and no nginx version. */
function assertApiRefusal(answer: Answer, code: ErrorCode, extra: Record<string, unknown> = {}): void {
  assert.equal(answer.status, ERRORS[code].status, answer.body);
  assert.deepEqual(JSON.parse(answer.body), errorBody(code, extra));
  assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
  for (const [name, value] of Object.entries(securityHeaders('/api/x')))
    assert.equal(answer.headers[name], value, name);
  assert.equal(answer.headers.server, 'nginx', 'no version');
}

describe('deploy/nginx.conf’s own error bodies', () => {
  it('copy src/errors.ts: each status nginx answers itself carries its code’s body', () => {
    const text = readFileSync(SHIPPED_NGINX_CONF, 'utf8');
    const block = /map \$status \$api_error_body \{\n([^}]*(?:\}'[^}]*)*)\n\}/.exec(text)?.[1];
    assert.ok(block, 'the map of error bodies');
    const entries = new Map(
      [...block.matchAll(/^\s*(\S+)\s+'(.*)';$/gm)].map((match) => [match[1]!, JSON.parse(match[2]!)]),
    );
    const expected = new Map<string, unknown>(
      NGINX_OWN.map(([status, code]) => [
        String(status),
        errorBody(code, code === 'SERVICE_UNAVAILABLE' ? { retryAfter: 1 } : {}),
      ]),
    );
    expected.set('default', errorBody('INTERNAL_ERROR'));
    assert.deepEqual(entries, expected);
  });
});

describe('nginx with no instance to reach', { skip }, () => {
  it('answers 503 SERVICE_UNAVAILABLE in the API’s shape, with Retry-After', async (t) => {
    const [port, gone1, gone2] = [await freePort(), await freePort(), await freePort()];
    const nginx = await startNginx({
      listen: `127.0.0.1:${port}`,
      upstreams: [`127.0.0.1:${gone1}`, `127.0.0.1:${gone2}`],
    });
    t.after(() => nginx.stop());
    await nginx.listening(port);
    const agent = new http.Agent();
    t.after(() => agent.destroy());
    for (const request of [
      { method: 'GET', path: '/api/auth/me' },
      {
        method: 'POST',
        path: '/api/auth/login',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      },
      { method: 'GET', path: '/page.html' },
    ]) {
      const outcome = await send(agent, { host: '127.0.0.1', port }, request);
      assert.equal(outcome.kind, 'answer', JSON.stringify(outcome));
      if (outcome.kind !== 'answer') continue;
      assertApiRefusal(outcome.answer, 'SERVICE_UNAVAILABLE', { retryAfter: 1 });
      assert.equal(outcome.answer.headers['retry-after'], '1');
    }
  });
});

describe('two instances behind nginx', { skip }, () => {
  let nginx: Nginx | undefined;
  let instances: TestApp[] = [];
  let proxy: Target;
  const connections = [0, 0];

  before(async () => {
    // Each instance keeps its own in-memory budgets (a Redis store would share them): round robin
    // spreads one client over both, so a client runs out after at most twice the budget.
    const clock = new ManualClock();
    const env = {
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_UNAUTHENTICATED: `${UNAUTHENTICATED_BUDGET}/15m`,
      RATE_LIMIT_LOGIN_IP: '100000/15m',
      RATE_LIMIT_LOGIN_ACCOUNT: '100000/15m',
    };
    for (const _ of [0, 1]) instances.push(await createTestApp({ env, clock }));
    const ports: number[] = [];
    for (const [i, instance] of instances.entries()) {
      instance.app.server.on('connection', () => connections[i]!++);
      await instance.app.listen({ host: '127.0.0.1', port: 0 });
      ports.push((instance.app.server.address() as AddressInfo).port);
    }
    const port = await freePort();
    nginx = await startNginx(
      { listen: `127.0.0.1:${port}`, upstreams: ports.map((upstream) => `127.0.0.1:${upstream}`) },
      { workerConnections: 512 },
    );
    await nginx.listening(port);
    proxy = { host: '127.0.0.1', port };
  });

  after(async () => {
    const errors = (await nginx?.errors()) ?? [];
    if (errors.length > 0) console.log(`# nginx error.log:\n${errors.join('\n')}`);
    await nginx?.stop();
    for (const instance of instances) await instance.close();
    instances = [];
    await closeTestDatabases();
  });

  const from = (localAddress: string): Target => ({ ...proxy, localAddress });

  it('lets a task import’s 20 MiB through to the instance, and no other route’s', async (t) => {
    const agent = new http.Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    const target = from('127.0.0.9');
    const csv = `client,title\r\n${'Northwind Traders,x\r\n'.repeat(Math.floor((19.5 * 1024 * 1024) / 21))}`;
    assert.ok(csv.length > 19 * 1024 * 1024 && csv.length < 20 * 1024 * 1024);
    const post = (path: string, body: string) =>
      send(agent, target, { method: 'POST', path, headers: { 'content-type': 'text/csv' }, body });
    // The instance answers (no CSRF token, no session here), not nginx's 413.
    const imported = await post('/api/employee/tasks/import', csv);
    assert.equal(imported.kind, 'answer', JSON.stringify(imported).slice(0, 300));
    if (imported.kind === 'answer') {
      assert.equal(imported.answer.status, 403, imported.answer.body);
      assert.equal(JSON.parse(imported.answer.body).code, 'CSRF_INVALID');
    }
    for (const [path, body] of [
      ['/api/employee/tasks', csv],
      ['/api/employee/tasks/import/', csv],
      ['/api/employee/tasks/import', `${csv}${'y'.repeat(1024 * 1024)}`],
    ] as const) {
      const refused = await post(path, body);
      assert.equal(refused.kind, 'answer', path);
      if (refused.kind === 'answer') assertApiRefusal(refused.answer, 'PAYLOAD_TOO_LARGE');
    }
  });

  it('keys each client by the address nginx appended to X-Forwarded-For', async (t) => {
    const agent = new http.Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    const statuses = async (target: Target, count: number, headers: Record<string, string> = {}) => {
      const seen: number[] = [];
      for (let i = 0; i < count; i++) {
        const outcome = await send(agent, target, { method: 'GET', path: '/api/auth/me', headers });
        assert.equal(outcome.kind, 'answer', JSON.stringify(outcome));
        if (outcome.kind === 'answer') seen.push(outcome.answer.status);
      }
      return seen;
    };
    const remaining = async (target: Target) => {
      const outcome = await send(agent, target, { method: 'GET', path: '/api/rate-limits' });
      assert.equal(outcome.kind, 'answer');
      const { controls } = JSON.parse((outcome as { answer: { body: string } }).answer.body) as {
        controls: { control: string; remaining: number }[];
      };
      return controls.find((control) => control.control === 'api-unauthenticated')!.remaining;
    };

    const alice = await statuses(from(ALICE_ADDRESS), 2 * UNAUTHENTICATED_BUDGET + 2);
    assert.ok(alice.includes(429), `one client runs out of its budget: ${alice.join(' ')}`);
    assert.ok(
      alice.slice(0, UNAUTHENTICATED_BUDGET).every((status) => status === 401),
      alice.join(' '),
    );
    assert.deepEqual(await statuses(from(BOB_ADDRESS), 1), [401], 'another client is not refused');
    // A client cannot pick its key: nginx appends the real address after the one it claims.
    assert.deepEqual(
      await statuses(from(MALLORY_ADDRESS), 2, { 'x-forwarded-for': BOB_ADDRESS }),
      [401, 401],
    );
    for (const _ of [0, 1]) {
      // Twice each, so that both instances answer.
      assert.equal(await remaining(from(ALICE_ADDRESS)), 0);
      assert.ok(
        (await remaining(from(BOB_ADDRESS))) >= UNAUTHENTICATED_BUDGET - 1,
        'Mallory spent none of Bob’s',
      );
    }
  });

  it('answers its own refusals in the API’s JSON shape with nosniff, and names no version', async (t) => {
    const agent = new http.Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    const target = from('127.0.0.6');
    // A body over nginx's 1 MiB (an instance refuses anything over 64 KiB itself).
    const big = await send(agent, target, {
      method: 'POST',
      path: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      body: `{"email":"a@example.com","password":"${'x'.repeat(1024 * 1024)}"}`,
    });
    assert.equal(big.kind, 'answer', JSON.stringify(big));
    if (big.kind === 'answer') assertApiRefusal(big.answer, 'PAYLOAD_TOO_LARGE');
    // A request line over nginx's 32 KiB buffers, and headers over them: what an instance answers 431 for.
    const longLine = await sendRaw(
      target,
      Buffer.from(`GET /api/csrf-token?${'q'.repeat(40 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    const longHeader = await sendRaw(
      target,
      Buffer.from(`GET /api/csrf-token HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(40 * 1024)}\r\n\r\n`),
    );
    // A length nginx cannot read, and a transfer coding it does not know.
    const badLength = await sendRaw(
      target,
      Buffer.from('POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: twelve\r\n\r\n'),
    );
    const badCoding = await sendRaw(
      target,
      Buffer.from('POST /api/auth/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n'),
    );
    for (const [outcome, code] of [
      [longLine, 'HEADERS_TOO_LARGE'],
      [longHeader, 'HEADERS_TOO_LARGE'],
      [badLength, 'BAD_REQUEST'],
      [badCoding, 'BAD_REQUEST'],
    ] as const) {
      assert.equal(outcome.answers.length, 1, JSON.stringify(outcome));
      assertApiRefusal(outcome.answers[0]!, code);
    }
    // The page nginx answers errors with is no page of its own.
    const internal = await send(agent, target, { method: 'GET', path: '/.api-error' });
    assert.equal(internal.kind, 'answer');
    if (internal.kind === 'answer') assertApiRefusal(internal.answer, 'NOT_FOUND');
    // An instance's own answers pass as they are, with no version either.
    const own = await send(agent, target, { method: 'GET', path: '/api/nope' });
    assert.equal(own.kind, 'answer');
    if (own.kind === 'answer') {
      assert.deepEqual(JSON.parse(own.answer.body), {
        code: 'NOT_FOUND',
        message: 'No route for GET /api/nope.',
      });
      assert.equal(own.answer.headers['x-content-type-options'], 'nosniff');
      assert.equal(own.answer.headers.server, 'nginx');
    }
  });

  it('never passes a client’s X-Forwarded-Host or X-Forwarded-Proto: the RP ID and the CSRF origin are nginx’s view', async (t) => {
    const agent = new http.Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    const target = from('127.0.0.7');
    const host = `127.0.0.1:${proxy.port}`;
    const forged = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    const answer = async (request: Parameters<typeof send>[2]) => {
      const outcome = await send(agent, target, request);
      assert.equal(outcome.kind, 'answer', JSON.stringify(outcome));
      return (outcome as { answer: Answer }).answer;
    };
    const csrf = await answer({ method: 'GET', path: '/api/csrf-token', headers: forged });
    assert.equal(csrf.status, 200);
    const cookies = (csrf.headers['set-cookie'] ?? []).map((cookie) => cookie.split(';')[0]!).join('; ');
    assert.ok(
      (csrf.headers['set-cookie'] ?? []).every((cookie) => !/;\s*Secure/i.test(cookie)),
      'plain http: no Secure cookie, whatever X-Forwarded-Proto the client sent',
    );
    const token = (JSON.parse(csrf.body) as { csrfToken: string }).csrfToken;
    const headers = { ...forged, cookie: cookies, 'x-csrf-token': token, host };
    // The passkey options name the host the browser used, not the one the client wrote.
    const options = await answer({ method: 'POST', path: '/api/auth/passkey/options', headers });
    assert.equal(options.status, 200, options.body);
    assert.equal((JSON.parse(options.body) as { rpId: string }).rpId, '127.0.0.1');
    // An Origin matching the forged host is another origin: 403, as from any other site.
    const login = await answer({
      method: 'POST',
      path: '/api/auth/login',
      headers: { ...headers, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@example.com', password: 'demo-password' }),
    });
    assert.equal(login.status, 403, login.body);
    assert.equal(JSON.parse(login.body).code, 'CSRF_INVALID');
    const honest = await answer({
      method: 'POST',
      path: '/api/auth/login',
      headers: { ...headers, origin: `http://${host}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@example.com', password: 'demo-password' }),
    });
    assert.equal(honest.status, 200, honest.body);
  });

  it('answers the valid requests around a burst of oversized and malformed ones without a 502', async (t) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    t.after(() => agent.destroy());
    const target = from('127.0.0.5');
    const big = 'b'.repeat(20 * 1024); // over Node's 16 KiB, under the shipped 32 KiB buffers
    const valid = (i: number) =>
      i % 2 === 0
        ? send(agent, target, { method: 'GET', path: '/api/csrf-token' })
        : send(agent, target, {
            method: 'POST',
            path: '/api/auth/login',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email: 'alice@example.com', password: 'wrong' }),
          });
    const oversized = () =>
      send(agent, target, { method: 'GET', path: '/api/csrf-token', headers: { 'x-big': big } });
    const malformed = (i: number) =>
      sendRaw(
        target,
        Buffer.from(
          i % 2 === 0
            ? `GET /api/csrf-token HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\nX-Bigger: ${big}\r\n\r\n`
            : 'GET /api/csrf-token HTTP/1.1\r\nHost: x\r\nX-Ctl: a\u0001b\r\n\r\n',
          'latin1',
        ),
      );
    const connectionsBefore = connections[0]! + connections[1]!;
    const logged = (await nginx!.errors()).length; // earlier tests' refusals (a 413) are logged too
    const rounds = 40;
    const results = await Promise.all(
      Array.from({ length: rounds }, async (_, i) => ({
        valid: await Promise.all([valid(i), valid(i + 1), valid(i + 2)]),
        oversized: await oversized(),
        malformed: await malformed(i),
        after: await valid(i),
      })),
    );

    const validOutcomes = results.flatMap((round) => [...round.valid, round.after]);
    const validStatuses = validOutcomes.map((outcome) =>
      outcome.kind === 'answer' ? outcome.answer.status : outcome.code,
    );
    assert.deepEqual(
      validStatuses.filter((status) => status !== 200 && status !== 403),
      [],
      'every valid request is answered by the app (200, or 403 for a login without a CSRF token)',
    );
    for (const { oversized: outcome } of results) {
      assert.equal(outcome.kind, 'answer', JSON.stringify(outcome));
      if (outcome.kind !== 'answer') continue;
      assert.equal(outcome.answer.status, 431);
      assert.equal(JSON.parse(outcome.answer.body).code, 'HEADERS_TOO_LARGE');
      assert.equal(outcome.answer.headers['x-content-type-options'], 'nosniff');
    }
    for (const { malformed: outcome } of results) {
      for (const answer of outcome.answers) assert.notEqual(answer.status, 502, answer.body);
    }
    const opened = connections[0]! + connections[1]! - connectionsBefore;
    t.diagnostic(
      `${validOutcomes.length} valid, ${rounds} oversized, ${rounds} malformed requests through nginx on ${opened} upstream connections`,
    );
    assert.ok(opened < validOutcomes.length, `upstream connections are kept alive (${opened} opened)`);
    // The shipped file retries a GET whose connection failed on the other instance, unseen by the
    // client; nginx still logs every such failure.
    assert.deepEqual(
      (await nginx!.errors()).slice(logged),
      [],
      'no upstream connection was reset or refused',
    );
  });
});
