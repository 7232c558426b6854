// GET /metrics: Prometheus text with requests, 429s by code, decision latency and the store's state.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import type { RateLimitStore } from '../../src/rate-limit/stores/store.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

describe('GET /metrics', () => {
  it('counts requests by route pattern and status, and 429s by code', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '2/1m' } });
    t.after(close);
    const visitor = client();
    for (let i = 0; i < 3; i++) await visitor.get('/api/employee/tasks/17');
    await visitor.get('/api/no-such-route');
    const response = await visitor.get('/metrics');
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(response.headers['ratelimit-limit'], undefined, '/metrics is under no limiter');
    const body = response.body;
    assert.match(
      body,
      /http_requests_total\{method="GET",route="\/api\/employee\/tasks\/:id",status="401"\} 2/,
    );
    assert.match(
      body,
      /http_requests_total\{method="GET",route="\/api\/employee\/tasks\/:id",status="429"\} 1/,
    );
    // A path that matched no route is one series, whatever the path was.
    assert.match(body, /http_requests_total\{method="GET",route="unmatched",status="429"\} 1/);
    assert.match(body, /rate_limit_refusals_total\{code="API_RATE_LIMIT_UNAUTHENTICATED"\} 2/);
  });

  it('reports the in-memory store as never degraded, and does not time its sub-microsecond decisions', async (t) => {
    const { client, close } = await createTestApp();
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    await alice.get('/api/auth/me');
    const body = (await alice.get('/metrics')).body;
    assert.doesNotMatch(body, /rate_limit_decision_seconds_count\{/);
    assert.match(body, /rate_limit_store_degraded\{store="memory",failure_mode="none"\} 0/);
    assert.match(body, /rate_limit_redis_errors_total 0/);
  });

  it('times every decision of a store that answers asynchronously, as Redis does', async (t) => {
    const clock = new ManualClock();
    const memory = new MemoryStore({ clock, sweepIntervalMs: 0 });
    const remote: RateLimitStore = {
      consume: async (rule, key) => memory.consume(rule, key),
      peek: async (rule, key) => memory.peek(rule, key),
      release: async (rule, key, token) => memory.release(rule, key, token),
      reset: async (rule, key) => memory.reset(rule, key),
      close: () => memory.close(),
    };
    const { client, close } = await createTestApp({ clock, store: remote });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    await alice.get('/api/auth/me');
    await alice.get('/api/rate-limits');
    const body = (await alice.get('/metrics')).body;
    assert.match(
      body,
      /rate_limit_decision_seconds_count\{control="api-authenticated",operation="consume"\} 1/,
    );
    assert.match(body, /rate_limit_decision_seconds_count\{control="login-ip",operation="peek"\} 2/);
  });

  it('keeps the series of each app apart (one registry per app)', async (t) => {
    const [first, second] = [await createTestApp(), await createTestApp()];
    t.after(() => Promise.all([first.close(), second.close()]));
    await first.client().get('/healthz');
    const body = (await second.client().get('/metrics')).body;
    assert.doesNotMatch(body, /route="\/healthz"/);
  });
});
