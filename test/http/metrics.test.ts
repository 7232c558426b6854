// GET /metrics: Prometheus text with requests, 429s by code, decision latency and the store's state.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { failoverStack } from '../../src/rate-limit/stores/create-store.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { FakeRemoteStore, MemoryLog } from '../helpers/store-doubles.ts';

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

  it('times every decision of a remote store, and counts its outage and failures', async (t) => {
    const clock = new ManualClock();
    const remote = new FakeRemoteStore(clock);
    const stack = failoverStack(remote, { failureMode: 'local' }, clock, new MemoryLog());
    const { client, close } = await createTestApp({ clock, stack });
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
    assert.match(body, /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 0/);

    remote.fail();
    await alice.get('/api/auth/me'); // fails in the remote store, then decided locally
    await alice.get('/api/auth/me'); // decided locally at once: neither timed nor a failure
    const degraded = (await alice.get('/metrics')).body;
    assert.match(degraded, /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 1/);
    assert.match(degraded, /rate_limit_redis_errors_total 1/);
    assert.match(
      degraded,
      /rate_limit_decision_seconds_count\{control="api-authenticated",operation="consume"\} 2/,
    );

    remote.recover();
    clock.advance(1000);
    await alice.get('/api/auth/me'); // starts the probe, which finds the remote store back
    await new Promise(setImmediate);
    const recovered = (await alice.get('/metrics')).body;
    assert.match(recovered, /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 0/);
  });

  it('keeps the series of each app apart (one registry per app)', async (t) => {
    const [first, second] = [await createTestApp(), await createTestApp()];
    t.after(() => Promise.all([first.close(), second.close()]));
    await first.client().get('/healthz');
    const body = (await second.client().get('/metrics')).body;
    assert.doesNotMatch(body, /route="\/healthz"/);
  });
});
