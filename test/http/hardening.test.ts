// Attacks on the rules (docs/rules.md#endpoints) found in review, kept as regression tests.
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { DEMO_PASSWORD } from '../../src/db/seed.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { scrapeMetrics } from '../helpers/metrics.ts';
import { assertRefused } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

const WRONG = 'not-the-password';

const code = (response: { json<T>(): T }) => response.json<{ code: string }>().code;

describe('client addresses behind a trusted proxy', () => {
  it('keys by the X-Forwarded-For the proxy wrote, not by a Forwarded header the client sent', async (t) => {
    // The usual proxy (nginx proxy_add_x_forwarded_for, AWS ALB, …) appends to X-Forwarded-For and
    // passes any client-sent Forwarded header through untouched. Fastify's request.ip reads only
    // X-Forwarded-For; the limiter prefers Forwarded, so a client picks its own key per request.
    const { client, close } = await createTestApp({
      env: { TRUST_PROXY: '10.0.0.1', RATE_LIMIT_UNAUTHENTICATED: '2/1m' },
    });
    t.after(close);
    const viaProxy = client({ remoteAddress: '10.0.0.1' });
    const statuses: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const response = await viaProxy.get('/api/auth/me', {
        'x-forwarded-for': '203.0.113.7',
        forwarded: `for=192.0.2.${i}`,
      });
      statuses.push(response.statusCode);
    }
    assert.deepEqual(statuses, [401, 401, 429], 'one client behind the proxy shares one budget');
  });
});

describe('HEAD on the exempt GET routes', () => {
  it('never spends a generic bucket on HEAD /api/csrf-token or HEAD /api/rate-limits', async (t) => {
    // Fastify exposes a HEAD route for every GET; the policy table is keyed by "GET <url>", so the
    // HEAD twins fall to the generic plan: a "read that never consumes" consumes, and generic
    // pressure answers 429 API_RATE_LIMIT_UNAUTHENTICATED on the login entry path.
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m' } });
    t.after(close);
    const caller = client();
    for (const url of ['/api/rate-limits', '/api/rate-limits', '/api/csrf-token']) {
      const response = await caller.request({ method: 'HEAD', url });
      assert.equal(response.statusCode, 200, `HEAD ${url}`);
    }
    assert.equal((await caller.get('/api/auth/me')).statusCode, 401, 'the generic budget is untouched');
  });

  it('spends exactly one unit per HEAD on a generic route, and counts it once', async (t) => {
    // Each route gets its checks at registration; Fastify copies a GET's options for its HEAD twin,
    // so a check added twice would spend twice.
    const { app, client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '5/1m' } });
    t.after(close);
    const caller = client();
    const remaining: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await caller.request({ method: 'HEAD', url: '/api/employee/tasks' });
      remaining.push(response.headers['ratelimit-remaining']);
    }
    assert.deepEqual(remaining, ['4', '3', '2']);
    const metrics = await scrapeMetrics(app);
    assert.match(
      metrics,
      /http_requests_total\{method="HEAD",route="\/api\/employee\/tasks",status="401"\} 3/,
    );
  });
});

describe('POST /api/auth/login, the account key', () => {
  it('does not let "alİce@…" (capital dotted I) into alice’s locked account under a budget of its own', async (t) => {
    // SQL lower() folds 'İ' to 'i', JavaScript's toLowerCase() to 'i' + U+0307: the account is now
    // found by the same normal form the limiter keys it by, so the variant is another (unknown) account.
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' } });
    t.after(close);
    for (let i = 0; i < 2; i++)
      assert.equal(code(await client().login('alice@example.com', WRONG)), 'INVALID_CREDENTIALS');
    assertRefused(await client().login('alice@example.com'), 'LOGIN_RATE_LIMIT', 'login-account');
    const variant = await client().login('al\u0130ce@example.com');
    assert.equal(variant.statusCode, 401, `a locked account must stay locked, got ${variant.statusCode}`);
    assert.equal(code(variant), 'INVALID_CREDENTIALS');
  });
});

describe('POST /api/auth/login, order of checks', () => {
  it('answers 429 for a locked account before CSRF (403) and field validation (400)', async (t) => {
    // docs/rules.md#authentication-and-csrf: the rate limiter first, then body syntax, then CSRF, … then field validation. The
    // account is known once the body is parsed, but the lock is only looked at in the handler.
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m' } });
    t.after(close);
    assert.equal(code(await client().login('bob@example.com', WRONG)), 'INVALID_CREDENTIALS');
    const caller = client();
    await caller.fetchCsrf();
    const noToken = await caller.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'bob@example.com', password: WRONG },
      csrf: false,
    });
    const extraField = await caller.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'bob@example.com', password: WRONG, remember: true },
    });
    assert.deepEqual(
      [noToken.statusCode, extraField.statusCode],
      [429, 429],
      `got ${code(noToken)} and ${code(extraField)}`,
    );
  });
});

describe('the rate-limit store under a login burst', () => {
  it('keeps no account state for logins that the address limiter refused', async (t) => {
    // The account unit is reserved before the address unit; when the address refuses, the account's
    // unit is given back but its key stays tracked. A burst that passes the onRequest peek together
    // leaves one tracked key per random email, although the address admitted a single attempt.
    const clock = new ManualClock();
    const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
    const { client, close } = await createTestApp({ clock, store, env: { RATE_LIMIT_LOGIN_IP: '1/15m' } });
    t.after(close);
    const attacker = client();
    await attacker.fetchCsrf();
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        attacker.request({
          method: 'POST',
          url: '/api/auth/login',
          payload: { email: `random-${i}@example.net`, password: WRONG },
        }),
      ),
    );
    const failures = responses.filter((r) => code(r) === 'INVALID_CREDENTIALS').length;
    assert.equal(failures, 1, 'the address admitted one attempt');
    assert.ok(store.size <= 1 + failures, `tracked keys: ${store.size}, expected at most ${1 + failures}`);
  });
});

describe('POST /api/auth/login with a hash made at other parameters', () => {
  // The dummy hash for unknown emails is made at today's parameters; an account still hashed with
  // older, cheaper ones would answer a wrong password faster and give itself away by timing.
  const hashOf = async (database: { db: { query<T>(sql: string): Promise<T[]> } }) => {
    const [row] = await database.db.query<{ password_hash: string }>(
      "SELECT password_hash FROM users WHERE email = 'bob@example.com'",
    );
    return row!.password_hash;
  };

  it('redoes an argon2id hash at the new memory cost at the next successful login', async (t) => {
    const { client, database, close } = await createTestApp({ env: { PASSWORD_HASH_COST: '128' } });
    t.after(close);
    assert.match(await hashOf(database), /^\$argon2id\$v=19\$m=64,t=2,p=1\$/, 'seeded at the test cost');
    assert.equal(code(await client().login('bob@example.com', WRONG)), 'INVALID_CREDENTIALS');
    assert.match(await hashOf(database), /\$m=64,/, 'a failed login changes nothing');
    assert.equal((await client().login('bob@example.com')).statusCode, 200);
    assert.match(await hashOf(database), /^\$argon2id\$v=19\$m=128,t=2,p=1\$/);
    assert.equal((await client().login('bob@example.com')).statusCode, 200, 'the new hash verifies');
  });

  it('still verifies a legacy scrypt hash, and replaces it with argon2id at login', async (t) => {
    const { client, database, close } = await createTestApp();
    t.after(close);
    const salt = randomBytes(16);
    const key = scryptSync(DEMO_PASSWORD.normalize('NFKC'), salt, 32, { N: 2 ** 10, r: 8, p: 1 });
    const legacy = ['scrypt', 10, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
    await database.db.query('UPDATE users SET password_hash = $1 WHERE email = $2', [
      legacy,
      'bob@example.com',
    ]);
    assert.equal(code(await client().login('bob@example.com', WRONG)), 'INVALID_CREDENTIALS');
    assert.equal(await hashOf(database), legacy, 'a failed login keeps the legacy hash');
    assert.equal((await client().login('bob@example.com')).statusCode, 200, 'the scrypt hash verifies');
    assert.match(await hashOf(database), /^\$argon2id\$/);
    assert.equal((await client().login('bob@example.com')).statusCode, 200, 'the argon2id hash verifies');
  });
});

describe('secrets in start-up errors', () => {
  it('does not print the password of an invalid DATABASE_URL or REDIS_URL', () => {
    // loadConfig reports `NAME="<raw value>" is invalid`; a URL with a wrong scheme still carries
    // its credentials, which then land in the process's stderr and the log collector.
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: 'mysql://portal:db-hunter2@db.internal/portal',
      REDIS_URL: 'http://:redis-hunter2@cache.internal:6379',
    };
    assert.throws(
      () => loadConfig(env),
      (error: Error) => {
        assert.match(error.message, /DATABASE_URL/);
        assert.match(error.message, /REDIS_URL/);
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      },
    );
  });
});
