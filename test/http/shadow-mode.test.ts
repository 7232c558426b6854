// docs/rules.md#shadow-mode: the controls RATE_LIMIT_SHADOW names count and report but never refuse.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../src/clock.ts';
import { ConfigError } from '../../src/config.ts';
import { RateLimitEngine, type Verdict } from '../../src/rate-limit/engine.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { createTestApp, type TestClient, testConfig } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { scrapeMetrics } from '../helpers/metrics.ts';
import { assertRefused, rateLimitHeaders } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

const WRONG = 'not-the-password';

interface Report {
  control: string;
  mode: string;
  remaining: number;
}

const modes = async (client: TestClient) =>
  Object.fromEntries(
    (await client.get('/api/rate-limits'))
      .json<{ controls: Report[] }>()
      .controls.map((c) => [c.control, c.mode]),
  );

const shadowRefusals = async (app: FastifyInstance, control: string): Promise<number> => {
  const body = await scrapeMetrics(app);
  const match = new RegExp(`rate_limit_shadow_refusals_total\\{control="${control}"\\} (\\d+)`).exec(body);
  return match ? Number(match[1]) : 0;
};

describe('RATE_LIMIT_SHADOW', () => {
  it('lets a request past its budget go on, with headers that show the real state', async (t) => {
    const { app, client, clock, close } = await createTestApp({
      env: { RATE_LIMIT_UNAUTHENTICATED: '2/1m', RATE_LIMIT_SHADOW: 'api-unauthenticated' },
    });
    t.after(close);
    const visitor = client();
    await visitor.get('/api/auth/me');
    clock.advance(10_000);
    await visitor.get('/api/auth/me');
    for (let i = 0; i < 3; i++) {
      const response = await visitor.get('/api/auth/me');
      assert.equal(response.statusCode, 401, 'answered by the route, not refused');
      const headers = rateLimitHeaders(response);
      assert.deepEqual([headers.limit, headers.remaining, headers.reset], [2, 0, 50]);
      assert.equal(headers.retryAfter, null);
    }
    assert.equal(await shadowRefusals(app, 'api-unauthenticated'), 3);
    assert.equal(await shadowRefusals(app, 'task-bulk'), 0);
  });

  it('reports "mode": "shadow" for the named controls and "enforce" for every other one', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_SHADOW: ' task-bulk , login-ip' } });
    t.after(close);
    const alice = client();
    assert.deepEqual(await modes(alice), {
      'task-bulk': 'shadow',
      'api-unauthenticated': 'enforce',
      'login-ip': 'shadow',
      'passkey-options': 'enforce',
    });
    await alice.login('alice@example.com');
    assert.deepEqual(await modes(alice), {
      'task-bulk': 'shadow',
      'api-authenticated': 'enforce',
      'login-account': 'enforce',
      'login-ip': 'shadow',
      'login-device': 'enforce', // the browser that just logged in is a known device
      'passkey-options': 'enforce',
      'task-import': 'enforce',
    });
  });

  it('keeps enforcing the controls it does not name', async (t) => {
    const { client, close } = await createTestApp({
      env: { RATE_LIMIT_BULK: '1/1m', RATE_LIMIT_AUTHENTICATED: '3/1m', RATE_LIMIT_SHADOW: 'task-bulk' },
    });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    const bulk = () =>
      alice.request({
        method: 'PATCH',
        url: '/api/employee/tasks/bulk',
        payload: { taskIds: [1], assigneeId: 2 },
      });
    assert.equal((await bulk()).statusCode, 200);
    const over = await bulk();
    assert.equal(over.statusCode, 200, 'task-bulk is in shadow');
    assert.equal(rateLimitHeaders(over).remaining, 0);
    for (let i = 0; i < 3; i++) await alice.get('/api/auth/me');
    assertRefused(await alice.get('/api/auth/me'), 'API_RATE_LIMIT_AUTHENTICATED', 'api-authenticated');
  });

  it('lets a login past the account and address budgets reach the password check', async (t) => {
    const { app, client, close } = await createTestApp({
      env: {
        RATE_LIMIT_LOGIN_ACCOUNT: '2/15m',
        RATE_LIMIT_LOGIN_IP: '3/15m',
        RATE_LIMIT_SHADOW: 'login-account,login-ip',
      },
    });
    t.after(close);
    const attacker = client();
    for (let i = 0; i < 5; i++) {
      const failure = await attacker.login('bob@example.com', WRONG);
      assert.equal(failure.statusCode, 401, `attempt ${i + 1} reaches the password check`);
      assert.equal(failure.json<{ code: string }>().code, 'INVALID_CREDENTIALS');
    }
    // Attempts 3, 4, 5 would have met the account's lock; 4 and 5 the address's too.
    assert.equal(await shadowRefusals(app, 'login-account'), 3);
    assert.equal(await shadowRefusals(app, 'login-ip'), 2);
    const owner = await attacker.login('bob@example.com');
    assert.equal(owner.statusCode, 200, 'a correct password logs in');
    assert.equal(await shadowRefusals(app, 'login-account'), 4);
  });

  it('logs at most one line per control per second, with the count of would-be refusals', () => {
    const clock = new ManualClock();
    const lines: { control: string; wouldHaveRefused: number }[] = [];
    const config = testConfig({ RATE_LIMIT_BULK: '1/1h', RATE_LIMIT_SHADOW: 'task-bulk,login-ip' });
    const engine = new RateLimitEngine(config.rateLimits, new MemoryStore({ clock, sweepIntervalMs: 0 }), {
      clock,
      log: { info: (details) => lines.push(details as (typeof lines)[number]) },
    });
    engine.consume('task-bulk', 'u1');
    for (let i = 0; i < 15; i++) {
      const verdict = engine.consume('task-bulk', 'u1') as Verdict;
      assert.deepEqual([verdict.decision.allowed, verdict.refused], [false, false]);
    }
    assert.deepEqual(lines, [{ control: 'task-bulk', wouldHaveRefused: 1 }]);
    clock.advance(999);
    engine.consume('task-bulk', 'u1');
    assert.equal(lines.length, 1);
    clock.advance(1);
    engine.consume('task-bulk', 'u1');
    assert.deepEqual(lines[1], { control: 'task-bulk', wouldHaveRefused: 16 });
  });

  it('stops the server at start when it names a control that does not exist', () => {
    assert.throws(
      () => testConfig({ RATE_LIMIT_SHADOW: 'task-bulk,login-everything' }),
      (error: unknown) =>
        error instanceof ConfigError && error.problems.some((p) => p.startsWith('RATE_LIMIT_SHADOW=')),
    );
  });
});
