// Redis dies, hangs or returns: no 5xx, no hang, budgets per RATE_LIMIT_STORE_FAILURE.
/*
 * These tests wait for real time, and only these: a dead or frozen redis-server, the client's
 * command timeout and its reconnection back-off run on the real clock (they protect real
 * requests), so a ManualClock cannot move them; the store stack gets the system clock too, for its
 * probe interval. The failover logic itself is pinned with a fake store in unit/failover-store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock, systemClock } from '../../src/clock.ts';
import { READINESS_MAX_AGE_MS } from '../../src/http/readiness.ts';
import { createStore } from '../../src/rate-limit/stores/create-store.ts';
import { createTestApp, type Response, type TestApp, type TestClient, testConfig } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { scrapeMetrics } from '../helpers/metrics.ts';
import { uniquePrefix } from '../helpers/redis.ts';
import { RedisServer, skipUnlessRedisBinaries } from '../helpers/redis-server.ts';
import { MemoryLog } from '../helpers/store-doubles.ts';

const skip = skipUnlessRedisBinaries();
after(closeTestDatabases);

/**
 * The command timeout of these instances: short, so that a frozen Redis costs little, but not so
 * short that a machine busy with other test files makes a live Redis look dead.
 */
const TIMEOUT_MS = 250;
/**
 * What a request may take beyond the command timeout. Generous, because CI runs test files side by
 * side; what it rules out is a hang: a queued command, a reconnect wait, a second timeout.
 */
const MARGIN_MS = 900;

interface Instance extends TestApp {
  readonly log: MemoryLog;
}

/** An instance on the private server, built like `npm start` builds it, with a short probe interval. */
async function instance(
  t: TestContext,
  server: RedisServer,
  mode: 'local' | 'open' | 'closed',
  prefix: string,
): Promise<Instance> {
  const env = {
    REDIS_URL: server.url,
    REDIS_KEY_PREFIX: prefix,
    REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS),
    RATE_LIMIT_STORE_FAILURE: mode,
    RATE_LIMIT_AUTHENTICATED: '10/15m',
  };
  const log = new MemoryLog();
  const options = { redis: testConfig(env).redis, failureMode: mode, retryAfterMs: 200 };
  const stack = await createStore(options, systemClock, log);
  const app = await createTestApp({ env, stack, clock: new ManualClock() });
  t.after(() => app.close());
  return { ...app, log };
}

/** Sends a request and checks the promise of these tests: never a 5xx (unless closed), never slow. */
async function timed(send: () => Promise<Response>, allow5xx = false): Promise<Response> {
  const started = performance.now();
  const response = await send();
  const elapsed = performance.now() - started;
  assert.ok(elapsed < TIMEOUT_MS + MARGIN_MS, `a request took ${Math.round(elapsed)} ms`);
  if (!allow5xx) assert.ok(response.statusCode < 500, `answered ${response.statusCode}: ${response.body}`);
  return response;
}

async function burst(client: TestClient, count: number, allow5xx = false): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const r = await timed(() => client.get('/api/auth/me'), allow5xx);
    const key = r.statusCode >= 400 ? `${r.statusCode} ${r.json().code}` : String(r.statusCode);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/**
 * Decisions of the generic bucket that took over 50 ms, from the latency histogram. Local
 * decisions are synchronous (microseconds even on a busy machine); one that waited for Redis took
 * at least the command timeout.
 */
async function slowDecisions(app: TestApp): Promise<number> {
  const body = await scrapeMetrics(app.app);
  const value = (series: string) =>
    Number(
      body
        .split('\n')
        .find((line) => line.startsWith(`${series} `))
        ?.split(' ')[1],
    );
  return value('rate_limit_decision_seconds_count') - value('rate_limit_decision_seconds_bucket{le="0.05"}');
}

async function readiness(app: TestApp) {
  app.clock.advance(READINESS_MAX_AGE_MS); // a fresh look each time (budgets here are per 15 minutes)
  const response = await app.app.inject({ method: 'GET', url: '/readyz' });
  return { status: response.statusCode, body: response.json() };
}

/** Polls /readyz until Redis is reported 'up' again (the client reconnects with a bounded back-off). */
async function waitForRecovery(app: TestApp): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await readiness(app)).body.redis !== 'up') {
    if (Date.now() > deadline) throw new Error('Redis was not reported up again within 15 s');
    await sleep(100);
  }
}

describe('Redis outage, RATE_LIMIT_STORE_FAILURE=local (the default)', { skip }, () => {
  let server: RedisServer;
  before(async () => {
    server = await RedisServer.start();
  });
  after(() => server?.stop());

  it('keeps answering on each instance’s own budget while Redis is down, then shares again', async (t) => {
    const prefix = uniquePrefix();
    const [a, b] = [await instance(t, server, 'local', prefix), await instance(t, server, 'local', prefix)];
    const alice = a.client({ remoteAddress: '198.51.100.10' });
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const aliceOnB = b.client({ remoteAddress: '198.51.100.10' });
    assert.equal((await aliceOnB.login('alice@example.com')).statusCode, 200);
    assert.deepEqual(await readiness(a), {
      status: 200,
      body: { status: 'ok', database: 'up', redis: 'up' },
    });

    // Shared: 3 on A and 3 on B spend one budget of 10 in Redis.
    assert.deepEqual(await burst(alice, 3), { 200: 3 });
    assert.deepEqual(await burst(aliceOnB, 3), { 200: 3 });
    assert.equal(Number((await alice.get('/api/auth/me')).headers['ratelimit-remaining']), 3);

    await server.kill();
    // Each instance now enforces the whole budget on its own: 10 each, then its own 429s.
    assert.deepEqual(await burst(alice, 14), { 200: 10, '429 API_RATE_LIMIT_AUTHENTICATED': 4 });
    assert.deepEqual(await burst(aliceOnB, 12), { 200: 10, '429 API_RATE_LIMIT_AUTHENTICATED': 2 });
    assert.deepEqual(await readiness(a), {
      status: 200,
      body: { status: 'degraded', database: 'up', redis: 'down' },
    });
    const metrics = await scrapeMetrics(a.app);
    assert.match(metrics, /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 1/);
    assert.match(metrics, /rate_limit_redis_errors_total [1-9]/);
    assert.match(metrics, /rate_limit_refusals_total\{code="API_RATE_LIMIT_AUTHENTICATED"\} 4/);
    assert.deepEqual(
      a.log.lines.map((line) => line.level),
      ['warn'],
      'one line when the degraded state starts',
    );

    await server.restart(); // empty: this server keeps nothing on disk
    await Promise.all([waitForRecovery(a), waitForRecovery(b)]);
    assert.deepEqual(
      a.log.lines.map((line) => line.level),
      ['warn', 'info'],
      'and one when it ends',
    );
    assert.match(a.log.lines[1]!.message, /recovered/);
    // Shared again: one budget of 10 over both instances, kept in the restarted Redis. (Should an
    // instance fall back again, its store's log says why.)
    const logs = () => JSON.stringify({ a: a.log.lines, b: b.log.lines });
    assert.deepEqual(await burst(alice, 6), { 200: 6 }, logs());
    assert.deepEqual(await burst(aliceOnB, 6), { 200: 4, '429 API_RATE_LIMIT_AUTHENTICATED': 2 }, logs());
    assert.notEqual(await server.cli('KEYS', `${prefix}*`), '');
    const after = await scrapeMetrics(a.app);
    assert.match(after, /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 0/);
  });

  it('finds Redis back by itself while no request comes (its metrics say so)', async (t) => {
    const a = await instance(t, server, 'local', uniquePrefix());
    const visitor = a.client({ remoteAddress: '198.51.100.11' });
    await server.kill();
    assert.deepEqual(await burst(visitor, 1), { '401 UNAUTHENTICATED': 1 });
    const degraded = (text: string) =>
      /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 1/.test(text);
    assert.ok(degraded(await scrapeMetrics(a.app)));

    await server.restart();
    // Only the metrics page is read from here on: no request, and no readiness look after the
    // first scrape's (the app's clock stands still, so that look answers every later scrape).
    const deadline = Date.now() + 15_000;
    while (degraded(await scrapeMetrics(a.app))) {
      if (Date.now() > deadline) throw new Error('still degraded 15 s after Redis came back');
      await sleep(100);
    }
    assert.match(a.log.lines.at(-1)!.message, /recovered/);
  });

  it('says at once that it started without Redis, in one line, before any request, and finds it later by itself', async (t) => {
    await server.kill();
    t.after(() => server.restart());
    const a = await instance(t, server, 'local', uniquePrefix());
    const degraded = (text: string) =>
      /rate_limit_store_degraded\{store="redis",failure_mode="local"\} 1/.test(text);
    // No request yet: the first scrape already says so, and the one log line is there.
    const first = await scrapeMetrics(a.app);
    assert.ok(degraded(first), first);
    assert.match(first, /^instance_ready 1$/m, 'degraded, still serving: ready (local mode)');
    assert.deepEqual(
      a.log.lines.map((line) => [line.level, line.message]),
      [
        [
          'warn',
          'rate-limit store degraded: redis is unavailable; each instance enforces the budgets on its own until it is back',
        ],
      ],
    );
    assert.match(JSON.stringify(a.log.lines[0]!.details), /did not answer within \d+ ms of the start/);
    assert.deepEqual(await readiness(a), {
      status: 200,
      body: { status: 'degraded', database: 'up', redis: 'down' },
    });
    await sleep(700); // several probe intervals (200 ms here) of a Redis still away: no more lines
    assert.equal(a.log.lines.length, 1);

    await server.restart();
    const deadline = Date.now() + 15_000;
    while (degraded(await scrapeMetrics(a.app))) {
      if (Date.now() > deadline) throw new Error('still degraded 15 s after Redis came');
      await sleep(100);
    }
    assert.match(a.log.lines.at(-1)!.message, /recovered/);
  });

  it('a hung Redis (SIGSTOP) costs at most one command timeout, then nothing until it answers', async (t) => {
    const a = await instance(t, server, 'local', uniquePrefix());
    const alice = a.client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    assert.deepEqual(await burst(alice, 2), { 200: 2 });

    const waitedBefore = await slowDecisions(a);
    server.pause();
    t.after(() => server.resume());
    // The first request waits for the timeout, then is decided locally; the ones after it no
    // longer ask Redis at all (the store leaves it alone and probes it in the background).
    assert.deepEqual(await burst(alice, 12), { 200: 10, '429 API_RATE_LIMIT_AUTHENTICATED': 2 });
    assert.equal((await slowDecisions(a)) - waitedBefore, 1, 'one decision waited for the timeout');
    assert.equal((await readiness(a)).body.redis, 'down');

    server.resume();
    await waitForRecovery(a);
    assert.equal((await alice.get('/api/auth/me')).statusCode, 200);
  });
});

describe('Redis outage, RATE_LIMIT_STORE_FAILURE=open', { skip }, () => {
  let server: RedisServer;
  before(async () => {
    server = await RedisServer.start();
  });
  after(() => server?.stop());

  it('admits everything while Redis is down, saying the whole budget remains', async (t) => {
    const a = await instance(t, server, 'open', uniquePrefix());
    const alice = a.client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    await server.kill();
    assert.deepEqual(await burst(alice, 15), { 200: 15 });
    const response = await alice.get('/api/auth/me');
    assert.equal(response.headers['ratelimit-remaining'], '10');
    assert.equal(response.headers['ratelimit-reset'], '0');
    assert.deepEqual(await readiness(a), {
      status: 200,
      body: { status: 'degraded', database: 'up', redis: 'down' },
    });
    await server.restart();
    await waitForRecovery(a);
  });
});

describe('Redis outage, RATE_LIMIT_STORE_FAILURE=closed', { skip }, () => {
  let server: RedisServer;
  before(async () => {
    server = await RedisServer.start();
  });
  after(() => server?.stop());

  it('answers 503 RATE_LIMIT_STORE_UNAVAILABLE under a limiter (never 429), and /readyz 503', async (t) => {
    const a = await instance(t, server, 'closed', uniquePrefix());
    const alice = a.client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    assert.deepEqual(await burst(alice, 2), { 200: 2 });

    await server.kill();
    assert.deepEqual(await burst(alice, 5, true), { '503 RATE_LIMIT_STORE_UNAVAILABLE': 5 });
    const login = await timed(() => a.client().login('bob@example.com'), true);
    assert.equal(login.statusCode, 503);
    assert.equal(login.json().code, 'RATE_LIMIT_STORE_UNAVAILABLE');
    // A wait to come back after, as every 503 says: the store is probed again a second after a failure.
    assert.equal(login.headers['retry-after'], '1');
    assert.equal(login.json().retryAfter, 1);
    // Routes under no limiter keep working.
    assert.equal((await timed(() => alice.get('/api/csrf-token'))).statusCode, 200);
    assert.equal((await a.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.deepEqual(await readiness(a), {
      status: 503,
      body: { status: 'unavailable', database: 'up', redis: 'down' },
    });

    await server.restart();
    await waitForRecovery(a);
    assert.equal((await readiness(a)).status, 200);
    assert.deepEqual(await burst(alice, 2), { 200: 2 });
  });
});
