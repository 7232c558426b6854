// /metrics: Prometheus text with requests, 429s by code, decision latency and the store's state, on its
// own listener; the public port answers it as the unknown path it is there.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { listenForMetrics } from '../../src/http/metrics-listener.ts';
import { failoverStack } from '../../src/rate-limit/stores/create-store.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { scrapeMetrics } from '../helpers/metrics.ts';
import { FakeRemoteStore, MemoryLog } from '../helpers/store-doubles.ts';

after(closeTestDatabases);

const unexpected = (error: unknown) => assert.fail(`a scrape failed: ${String(error)}`);

describe('GET /metrics on the public port', () => {
  it('answers 404 NOT_FOUND with the headers of any unknown path outside /api, and spends no budget', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '2/1m' } });
    t.after(close);
    const visitor = client();
    const unknown = await visitor.get('/no-such-page');
    for (const url of ['/metrics', '/metrics?name[]=http_requests_total', '/metrics/']) {
      const response = await visitor.get(url);
      assert.equal(response.statusCode, 404, url);
      const body = response.json();
      assert.equal(body.code, 'NOT_FOUND');
      assert.deepEqual(Object.keys(body), Object.keys(unknown.json()), 'the error body of any 404');
      assert.doesNotMatch(response.body, /http_requests_total/);
      for (const header of [
        'content-type',
        'content-security-policy',
        'x-content-type-options',
        'x-frame-options',
        'referrer-policy',
      ]) {
        assert.ok(response.headers[header], `${url}: ${header}`);
        assert.equal(response.headers[header], unknown.headers[header], `${url}: ${header}`);
      }
      assert.equal(response.headers['ratelimit-limit'], undefined, 'outside /api: under no limiter');
    }
    assert.equal((await visitor.get('/api/employee/tasks/17')).statusCode, 401, 'the budget is whole');
  });
});

describe('the metrics listener', () => {
  it('serves GET and HEAD /metrics in the text format, and 404 for anything else', async (t) => {
    const { app, close } = await createTestApp();
    t.after(close);
    const listener = await listenForMetrics(app.metrics, { host: '127.0.0.1', port: 0 }, unexpected);
    t.after(() => listener.close());
    assert.match(listener.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    await app.inject({ method: 'GET', url: '/healthz' });

    const response = await fetch(`${listener.url}/metrics`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const text = await response.text();
    assert.match(text, /^# HELP http_requests_total /m);
    assert.match(text, /^# TYPE http_requests_total counter$/m);
    assert.match(text, /^http_requests_total\{method="GET",route="\/healthz",status="200"\} 1$/m);

    const head = await fetch(`${listener.url}/metrics?ignored=1`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');

    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/healthz'],
      ['GET', '/api/auth/me'],
      ['GET', '/metricsx'],
      ['POST', '/metrics'],
      ['DELETE', '/metrics'],
    ] as const) {
      const other = await fetch(`${listener.url}${path}`, { method });
      assert.equal(other.status, 404, `${method} ${path}`);
      assert.deepEqual(await other.json(), { code: 'NOT_FOUND', message: 'Not found.' });
    }
  });

  it('answers 500 INTERNAL_ERROR and reports the error when a scrape fails', async (t) => {
    const failure = new Error('a collector threw');
    const reported: unknown[] = [];
    const source = { contentType: 'text/plain', metrics: () => Promise.reject(failure) };
    const listener = await listenForMetrics(source, { host: '127.0.0.1', port: 0 }, (error) =>
      reported.push(error),
    );
    t.after(() => listener.close());
    const response = await fetch(`${listener.url}/metrics`);
    assert.equal(response.status, 500);
    assert.equal((await response.json()).code, 'INTERNAL_ERROR');
    assert.deepEqual(reported, [failure]);
  });

  it('closes with its kept-alive connections, and frees its port', async () => {
    const source = { contentType: 'text/plain', metrics: async () => 'up 1\n' };
    const listener = await listenForMetrics(source, { host: '127.0.0.1', port: 0 }, unexpected);
    const response = await fetch(`${listener.url}/metrics`); // undici keeps the connection alive
    assert.equal(await response.text(), 'up 1\n');
    await listener.close(); // resolves only once every connection is gone
    await assert.rejects(fetch(`${listener.url}/metrics`));
    const port = Number(new URL(listener.url).port);
    const again = await listenForMetrics(source, { host: '127.0.0.1', port }, unexpected);
    await again.close();
  });

  it('rejects when its port is taken', async () => {
    const source = { contentType: 'text/plain', metrics: async () => '' };
    const first = await listenForMetrics(source, { host: '127.0.0.1', port: 0 }, unexpected);
    const port = Number(new URL(first.url).port);
    await assert.rejects(listenForMetrics(source, { host: '127.0.0.1', port }, unexpected), {
      code: 'EADDRINUSE',
    });
    await first.close();
  });
});

describe('the metrics', () => {
  it('counts requests by route pattern and status, and 429s by code', async (t) => {
    const { app, client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '2/1m' } });
    t.after(close);
    const visitor = client();
    for (let i = 0; i < 3; i++) await visitor.get('/api/employee/tasks/17');
    await visitor.get('/api/no-such-route');
    const body = await scrapeMetrics(app);
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
    const { app, client, close } = await createTestApp();
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    await alice.get('/api/auth/me');
    const body = await scrapeMetrics(app);
    assert.match(body, /^rate_limit_decision_seconds_count 0$/m);
    assert.match(body, /rate_limit_store_degraded\{store="memory",failure_mode="none"\} 0/);
    assert.match(body, /rate_limit_redis_errors_total 0/);
  });

  it('times every decision of a remote store, and counts its outage and failures', async (t) => {
    const clock = new ManualClock();
    const remote = new FakeRemoteStore(clock);
    const stack = failoverStack(remote, { failureMode: 'local' }, clock, new MemoryLog());
    const { app, client, close } = await createTestApp({ clock, stack });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com');
    const decisions = (text: string) => Number(/^rate_limit_decision_seconds_count (\d+)$/m.exec(text)?.[1]);
    const before = decisions(await scrapeMetrics(app));
    assert.ok(before > 0, 'the sign-in asked the remote store');
    await alice.get('/api/auth/me');
    const body = await scrapeMetrics(app);
    assert.equal(decisions(body), before + 1, 'GET /me: one decision, timed');
    assert.match(body, /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 0/);

    remote.fail();
    await alice.get('/api/auth/me'); // fails in the remote store, then decided locally
    await alice.get('/api/auth/me'); // decided locally at once: neither timed nor a failure
    const degraded = await scrapeMetrics(app);
    assert.match(degraded, /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 1/);
    assert.match(degraded, /rate_limit_redis_errors_total 1/);
    assert.equal(decisions(degraded), before + 2, 'the failed decision is timed, the local one is not');

    remote.recover();
    clock.advance(1000);
    await alice.get('/api/auth/me'); // starts the probe, which finds the remote store back
    await new Promise(setImmediate);
    const recovered = await scrapeMetrics(app);
    assert.match(recovered, /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 0/);
  });

  it('keeps the series of each app apart (one registry per app)', async (t) => {
    const [first, second] = [await createTestApp(), await createTestApp()];
    t.after(() => Promise.all([first.close(), second.close()]));
    await first.client().get('/healthz');
    const body = await scrapeMetrics(second.app);
    assert.doesNotMatch(body, /route="\/healthz"/);
  });
});
