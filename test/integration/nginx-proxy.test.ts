// Two instances behind the shipped nginx (deploy/nginx.conf): client addresses via X-Forwarded-For, and no 502 around refused requests.

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { send, sendRaw, type Target } from '../fuzz/transport.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { type Nginx, skipUnlessNginx, startNginx } from '../helpers/nginx.ts';
import { freePort } from '../helpers/redis-server.ts';

/** Distinct clients: nginx sees each loopback source address as its own $remote_addr. */
const ALICE_ADDRESS = '127.0.0.2';
const BOB_ADDRESS = '127.0.0.3';
const MALLORY_ADDRESS = '127.0.0.4';
const UNAUTHENTICATED_BUDGET = 5;

const skip = skipUnlessNginx();

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
    assert.deepEqual(await nginx!.errors(), [], 'no upstream connection was reset or refused');
  });
});
