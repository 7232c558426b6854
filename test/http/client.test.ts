// The typed client against the real server on a real port: every call, its rate-limit state and its errors.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it, type TestContext } from 'node:test';
import {
  ApiClient,
  type ApiClientOptions,
  ApiError,
  MemoryCookieJar,
  parseRateLimit,
  parseRetryAfter,
} from '../../src/client/index.ts';
import { fingerprint } from '../../src/http/plugins/idempotency.ts';
import { createTestApp, DEMO_PASSWORD } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

const ALICE = 'alice@example.com';
const BOB_ID = 2;

/** A test app listening on a free port, and a factory of clients for it (each with its own cookies). */
async function serve(t: TestContext, env: Record<string, string> = {}) {
  const test = await createTestApp({ env });
  t.after(test.close);
  await test.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = test.app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const client = (options: ApiClientOptions = {}) =>
    new ApiClient({
      baseUrl,
      cookieJar: new MemoryCookieJar(),
      // Waiting is moving the app's clock: the retry is admitted without real time passing.
      sleep: async (ms) => test.clock.advance(ms),
      ...options,
    });
  return { test, client };
}

async function rejects(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

describe('ApiClient', () => {
  it('bootstraps CSRF, signs in, reads, and signs out', async (t) => {
    const { client } = await serve(t);
    const alice = client();
    const token = await alice.csrf();
    assert.equal(alice.csrfToken, token);
    const user = await alice.login(ALICE, DEMO_PASSWORD);
    assert.deepEqual({ email: user.email, role: user.role }, { email: ALICE, role: 'employee' });
    assert.notEqual(alice.csrfToken, token, 'login hands out a new token');
    assert.equal((await alice.me()).id, user.id);
    const employees = await alice.employees();
    assert.deepEqual(
      employees.map((e) => e.email),
      ['alice@example.com', 'bob@example.com', 'carol@example.com'],
    );
    const clients = await alice.clients();
    assert.deepEqual(
      clients.map((c) => c.name),
      ['Globex Corporation', 'Initech', 'Northwind Traders'],
    );
    await alice.logout();
    assert.equal(alice.csrfToken, null);
    const error = await rejects(alice.me());
    assert.deepEqual([error.status, error.code], [401, 'UNAUTHENTICATED']);
  });

  it('fetches the CSRF token itself when login is called first', async (t) => {
    const { client } = await serve(t);
    assert.equal((await client().login(ALICE, DEMO_PASSWORD)).email, ALICE);
  });

  it('throws INVALID_CREDENTIALS for a wrong password, with the status and the message', async (t) => {
    const { client } = await serve(t);
    const error = await rejects(client().login(ALICE, 'not-the-password'));
    assert.equal(error.status, 401);
    assert.equal(error.code, 'INVALID_CREDENTIALS');
    assert.equal(typeof error.message, 'string');
    assert.equal(error.retryAfter, null);
  });

  it('throws LOGIN_RATE_LIMIT with retryAfter and the login control that refused', async (t) => {
    const { client } = await serve(t, { RATE_LIMIT_LOGIN_ACCOUNT: '2/1m' });
    const mallory = client();
    for (let i = 0; i < 2; i++) await rejects(mallory.login(ALICE, 'wrong'));
    const error = await rejects(mallory.login(ALICE, DEMO_PASSWORD));
    assert.equal(error.code, 'LOGIN_RATE_LIMIT');
    assert.equal(error.status, 429);
    assert.ok(error.retryAfter !== null && error.retryAfter >= 1 && error.retryAfter <= 60);
    assert.equal(error.rateLimit?.policy, 'login-account');
    assert.equal(error.rateLimit?.remaining, 0);
  });

  it('lists tasks with filters and follows the cursor to the last page', async (t) => {
    const { client } = await serve(t);
    const alice = client();
    await alice.login(ALICE, DEMO_PASSWORD);
    // The demo data ties status to client (both follow the id modulo 3): client 2's tasks are all done.
    const filters = { clientId: 2, status: 'done', limit: 10 } as const;
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await alice.tasks({ ...filters, cursor });
      for (const task of page.tasks) {
        assert.deepEqual([task.clientId, task.status], [2, 'done']);
        seen.push(task.id);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    assert.ok(seen.length > 10, 'more than one page');
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => a - b),
    );
    assert.equal(new Set(seen).size, seen.length);
    const mine = await alice.tasks({ assigneeId: BOB_ID, limit: 5 });
    assert.ok(mine.tasks.every((task) => task.assigneeId === BOB_ID));
    assert.equal((await alice.task(seen[0]!)).id, seen[0]);
  });

  it('reassigns in bulk and reports the bulk budget from the headers', async (t) => {
    const { client } = await serve(t);
    const alice = client();
    await alice.login(ALICE, DEMO_PASSWORD);
    const outcome = await alice.bulkReassign([2, 3, 999_999, 3], BOB_ID);
    assert.equal(outcome.succeeded, 2);
    assert.equal(outcome.failed, 2);
    assert.deepEqual(outcome.results, [
      { taskId: 2, status: 'reassigned' },
      { taskId: 3, status: 'reassigned' },
      { taskId: 999_999, status: 'failed', reason: 'NOT_FOUND' },
      { taskId: 3, status: 'failed', reason: 'DUPLICATE' },
    ]);
    assert.deepEqual(
      { ...outcome.rateLimit, receivedAt: 0 },
      {
        policy: 'task-bulk',
        limit: 30,
        windowSeconds: 900,
        remaining: 29,
        resetSeconds: 0,
        retryAfter: null,
        receivedAt: 0,
      },
    );
    assert.equal(alice.rateLimitState('task-bulk')?.remaining, 29);
    assert.equal((await alice.task(3)).assigneeId, BOB_ID);
    const controls = await alice.rateLimits();
    assert.deepEqual(
      controls.find((c) => c.control === 'task-bulk'),
      {
        control: 'task-bulk',
        code: 'TASK_BULK_RATE_LIMIT',
        mode: 'enforce',
        limit: 30,
        windowSeconds: 900,
        remaining: 29,
        resetSeconds: 0,
      },
    );
  });

  it('throws ASSIGNEE_NOT_FOUND and TASK_BULK_TOO_LARGE with their details', async (t) => {
    const { client } = await serve(t);
    const alice = client();
    await alice.login(ALICE, DEMO_PASSWORD);
    const admin = await rejects(alice.bulkReassign([1], 4));
    assert.deepEqual([admin.status, admin.code], [422, 'ASSIGNEE_NOT_FOUND']);
    const large = await rejects(
      alice.bulkReassign(
        Array.from({ length: 51 }, (_, i) => i + 1),
        BOB_ID,
      ),
    );
    assert.deepEqual([large.status, large.code, large.body.max], [400, 'TASK_BULK_TOO_LARGE', 50]);
  });

  it('throws TASK_BULK_RATE_LIMIT with retryAfter, and never retries a bulk call', async (t) => {
    const { test, client } = await serve(t, { RATE_LIMIT_BULK: '2/1m' });
    let slept = 0;
    const alice = client({ retry: true, sleep: async () => void slept++ });
    await alice.login(ALICE, DEMO_PASSWORD);
    await alice.bulkReassign([1], BOB_ID);
    await alice.bulkReassign([1], BOB_ID);
    const error = await rejects(alice.bulkReassign([1], BOB_ID));
    assert.equal(error.code, 'TASK_BULK_RATE_LIMIT');
    assert.equal(error.retryAfter, 60);
    assert.equal(error.rateLimit?.remaining, 0);
    assert.equal(error.rateLimit?.resetSeconds, 60);
    assert.equal(error.body.retryAfter, 60);
    assert.equal(slept, 0);
    test.clock.advance(60_000);
    assert.equal((await alice.bulkReassign([1], BOB_ID)).succeeded, 1);
  });

  it('waits Retry-After and retries a GET once when asked to', async (t) => {
    const { test, client } = await serve(t, { RATE_LIMIT_AUTHENTICATED: '2/30s' });
    const waits: number[] = [];
    const alice = client({
      retry: true,
      sleep: async (ms) => {
        waits.push(ms);
        test.clock.advance(ms);
      },
    });
    await alice.login(ALICE, DEMO_PASSWORD);
    await alice.me();
    await alice.me();
    const refused = await rejects(alice.me({ retry: false }));
    assert.equal(refused.code, 'API_RATE_LIMIT_AUTHENTICATED');
    assert.equal(refused.retryAfter, 30);
    assert.equal(alice.rateLimitState('api-authenticated')?.remaining, 0);
    assert.equal((await alice.me()).email, ALICE);
    assert.deepEqual(waits, [30_000]);
  });

  it('waits out a 503 that names its Retry-After as it does a 429, and throws LOGIN_BUSY from a login', async (t) => {
    const { client } = await serve(t);
    const waits: number[] = [];
    let busy = 0;
    // A server (or a proxy before it) too busy for the first try of each call: 503, come back in 2 s.
    const busyOnce: typeof fetch = async (input, init) => {
      if (busy++ % 2 === 1) return fetch(input, init);
      const body = { code: 'LOGIN_BUSY', message: 'Sign-in is very busy right now.', retryAfter: 2 };
      return new Response(JSON.stringify(body), {
        status: 503,
        headers: { 'content-type': 'application/json', 'retry-after': '2' },
      });
    };
    const alice = client({ retry: true, fetch: busyOnce, sleep: async (ms) => void waits.push(ms) });
    assert.ok((await alice.csrf()).length > 0, 'the GET was retried after the 503');
    assert.deepEqual(waits, [2000]);
    const refused = await rejects(alice.login(ALICE, DEMO_PASSWORD));
    assert.deepEqual([refused.status, refused.code, refused.retryAfter], [503, 'LOGIN_BUSY', 2]);
    assert.deepEqual(waits, [2000], 'a login is not retried by the client: the page decides');
  });

  it('retries only once: a second 429 is thrown', async (t) => {
    const { client } = await serve(t, { RATE_LIMIT_AUTHENTICATED: '1/30s' });
    let waits = 0;
    // A sleep that lets no time pass on the server: the retry is refused too.
    const alice = client({ retry: true, sleep: async () => void waits++ });
    await alice.login(ALICE, DEMO_PASSWORD);
    await alice.me();
    const error = await rejects(alice.me());
    assert.equal(error.code, 'API_RATE_LIMIT_AUTHENTICATED');
    assert.equal(waits, 1);
  });

  it('does not wait longer than maxWaitSeconds', async (t) => {
    const { client } = await serve(t, { RATE_LIMIT_AUTHENTICATED: '1/10m' });
    const alice = client({ retry: { maxWaitSeconds: 60 } });
    await alice.login(ALICE, DEMO_PASSWORD);
    await alice.me();
    const error = await rejects(alice.me());
    assert.equal(error.retryAfter, 600);
    const once = await rejects(alice.me({ retry: false }));
    assert.equal(once.code, 'API_RATE_LIMIT_AUTHENTICATED');
  });

  it('fetches a fresh CSRF token once when the one it holds is stale', async (t) => {
    const { client } = await serve(t);
    const alice = client();
    await alice.csrf();
    await alice.login(ALICE, DEMO_PASSWORD);
    // Simulate a token from before the login (another tab signed in meanwhile).
    (alice as unknown as { token: string }).token = 'stale';
    assert.equal((await alice.bulkReassign([5], BOB_ID)).succeeded, 1);
  });

  it('sends a bulk reassignment under a new Idempotency-Key per call, or the one given', async (t) => {
    const { client } = await serve(t);
    const sent: (string | null)[] = [];
    const recording: typeof fetch = async (input, init) => {
      if (init?.method === 'PATCH') sent.push(new Headers(init.headers).get('idempotency-key'));
      return fetch(input, init);
    };
    const alice = client({ fetch: recording });
    await alice.login(ALICE, DEMO_PASSWORD);
    const first = await alice.bulkReassign([1], BOB_ID);
    const second = await alice.bulkReassign([1], BOB_ID);
    assert.match(
      first.idempotencyKey!,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    assert.notEqual(first.idempotencyKey, second.idempotencyKey, 'a new key per reassignment');
    assert.deepEqual([first.replayed, second.replayed], [false, false]);
    const again = await alice.bulkReassign([1], BOB_ID, { idempotencyKey: first.idempotencyKey });
    assert.equal(again.replayed, true, 'the same key: the stored answer');
    assert.equal(again.rateLimit?.remaining, 28, 'and nothing spent');
    const unkeyed = await alice.bulkReassign([1], BOB_ID, { idempotencyKey: null });
    assert.equal(unkeyed.idempotencyKey, null);
    assert.deepEqual(sent, [first.idempotencyKey, second.idempotencyKey, first.idempotencyKey, null]);
  });

  it('sends a keyed reassignment again with its key after a lost answer, a 502, 503 or 504, at most twice, after Retry-After', async (t) => {
    const { client } = await serve(t);
    const waits: number[] = [];
    const keys: string[] = [];
    /** Fails PATCHes as `failures` says, in turn: `lost` reaches the server and loses its answer. */
    let failures: ('lost' | 'unreached' | 502 | 503 | 504)[] = [];
    const flaky: typeof fetch = async (input, init) => {
      if (init?.method !== 'PATCH') return fetch(input, init);
      keys.push(new Headers(init.headers).get('idempotency-key')!);
      const failure = failures.shift();
      if (failure === undefined) return fetch(input, init);
      if (failure === 'lost') {
        await fetch(input, init);
        throw new TypeError('fetch failed');
      }
      if (failure === 'unreached') throw new TypeError('fetch failed');
      const headers: Record<string, string> =
        failure === 503
          ? { 'content-type': 'application/json', 'retry-after': '3' }
          : { 'content-type': 'text/html' };
      const body =
        failure === 503
          ? JSON.stringify({ code: 'DATABASE_UNAVAILABLE', message: 'away', retryAfter: 3 })
          : '<html>';
      return new Response(body, { status: failure, headers });
    };
    const alice = client({ fetch: flaky, sleep: async (ms) => void waits.push(ms) });
    await alice.login(ALICE, DEMO_PASSWORD);

    // Applied, but its answer lost: the retry gets the stored answer, and nothing twice.
    failures = ['lost'];
    const replayed = await alice.bulkReassign([7, 8], BOB_ID);
    assert.equal(replayed.replayed, true);
    assert.equal(replayed.succeeded, 2);
    assert.equal(replayed.rateLimit?.remaining, 29, 'charged once');
    assert.deepEqual(waits, [1000], 'a second when nothing said how long');
    assert.equal(new Set(keys).size, 1, 'the same key both times');

    // Each failure that leaves the fate unknown, then an answer: twice at most, Retry-After honoured.
    for (const pair of [
      [502, 504],
      [503, 'unreached'],
    ] as const) {
      waits.length = 0;
      keys.length = 0;
      failures = [...pair];
      const outcome = await alice.bulkReassign([9], BOB_ID);
      assert.equal(outcome.replayed, false, `${pair}: never applied before`);
      assert.equal(keys.length, 3);
      assert.equal(new Set(keys).size, 1);
      assert.deepEqual(waits, pair[0] === 503 ? [3000, 1000] : [1000, 1000]);
    }

    // A third failure is thrown: two retries at most.
    failures = [502, 502, 502];
    const error = await rejects(alice.bulkReassign([9], BOB_ID));
    assert.equal(error.status, 502);
    assert.equal(failures.length, 0, 'three tries in all');

    // Without a key, or with retry: false, nothing is sent twice.
    failures = ['unreached'];
    assert.equal(
      (await rejects(alice.bulkReassign([9], BOB_ID, { idempotencyKey: null }))).code,
      'NETWORK_ERROR',
    );
    failures = [504];
    assert.equal((await rejects(alice.bulkReassign([9], BOB_ID, { retry: false }))).status, 504);
  });

  it('waits out a 409 IDEMPOTENCY_KEY_IN_FLIGHT and gets the answer of the try in flight', async (t) => {
    const { test, client } = await serve(t);
    const { db } = test.database;
    const key = 'client-in-flight-1';
    const answer = { succeeded: 1, failed: 0, results: [{ taskId: 4, status: 'reassigned' }] };
    const waits: number[] = [];
    // Another instance holds the key, and answers while this client waits its Retry-After.
    const alice = client({
      sleep: async (ms) => {
        waits.push(ms);
        await db.query('UPDATE idempotency_keys SET response = $2, fingerprint = $3 WHERE key = $1', [
          key,
          JSON.stringify(answer),
          fingerprint({ taskIds: [4], assigneeId: BOB_ID }),
        ]);
      },
    });
    await alice.login(ALICE, DEMO_PASSWORD);
    await db.query(
      `INSERT INTO idempotency_keys (user_id, key, claim, claimed_at, expires_at)
       SELECT id, $2, 'another instance', to_timestamp($3 / 1000.0), to_timestamp($3 / 1000.0 + 86400)
         FROM users WHERE email = $1`,
      [ALICE, key, test.clock.now()],
    );
    const outcome = await alice.bulkReassign([4], BOB_ID, { idempotencyKey: key });
    assert.deepEqual(waits, [1000], 'Retry-After: 1');
    assert.equal(outcome.replayed, true);
    assert.deepEqual(outcome.results, answer.results);
  });

  it('reports a network failure as NETWORK_ERROR with status 0', async () => {
    const error = await rejects(new ApiClient({ baseUrl: 'http://127.0.0.1:9' }).me());
    assert.deepEqual([error.status, error.code], [0, 'NETWORK_ERROR']);
  });
});

describe('parseRateLimit', () => {
  const headers = (fields: Record<string, string>) => new Headers(fields);

  it('reads the structured pair and the draft-06 triple the server sends', () => {
    const state = parseRateLimit(
      headers({
        'RateLimit-Limit': '30',
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': '412',
        'RateLimit-Policy': '"task-bulk";q=30;w=900',
        RateLimit: '"task-bulk";r=0;t=412',
        'Retry-After': '412',
      }),
      1000,
    );
    assert.deepEqual(state, {
      policy: 'task-bulk',
      limit: 30,
      windowSeconds: 900,
      remaining: 0,
      resetSeconds: 412,
      retryAfter: 412,
      receivedAt: 1000,
    });
  });

  it('picks the policy named by RateLimit among several', () => {
    const state = parseRateLimit(
      headers({
        'RateLimit-Policy': '"login-ip";q=100;w=900, "login-account";q=10;w=900',
        RateLimit: '"login-account";r=0;t=60',
      }),
    );
    assert.deepEqual(
      [state?.policy, state?.limit, state?.remaining, state?.resetSeconds],
      ['login-account', 10, 0, 60],
    );
  });

  it('falls back to the triple alone, and to it when the structured fields are malformed', () => {
    const triple = parseRateLimit(
      headers({ 'RateLimit-Limit': '100', 'RateLimit-Remaining': '7', 'RateLimit-Reset': '3' }),
    );
    assert.deepEqual(
      [triple?.policy, triple?.limit, triple?.windowSeconds, triple?.remaining],
      [null, 100, null, 7],
    );
    const draft07 = parseRateLimit(
      headers({
        RateLimit: 'limit=30, remaining=5, reset=9',
        'RateLimit-Remaining': '5',
        'RateLimit-Reset': '9',
      }),
    );
    assert.deepEqual([draft07?.remaining, draft07?.resetSeconds], [5, 9]);
  });

  it('returns null without rate-limit headers', () => {
    assert.equal(parseRateLimit(headers({ 'Content-Type': 'application/json' })), null);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    assert.equal(parseRetryAfter('120'), 120);
    assert.equal(parseRetryAfter(new Date(61_000).toUTCString(), 1_000), 60);
    assert.equal(parseRetryAfter('soon'), null);
    assert.equal(parseRetryAfter(null), null);
  });
});
