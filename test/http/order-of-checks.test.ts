// The order of checks on an /api request (docs/rules.md#authentication-and-csrf), hook by hook.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { freshAccount, signedIn } from '../helpers/accounts.ts';
import { createTestApp, type Response, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { assertRefused, rateLimitHeaders } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

const RESET = '/api/admin/login-locks/reset';
const TOO_LARGE = `{"email":"bob@example.com"}${' '.repeat(70_000)}`;

/** A POST of a raw JSON body to the admin route: generic limiter, body, CSRF, admin access, fields. */
function reset(caller: TestClient, body: string, options: { csrf?: boolean } = {}): Promise<Response> {
  return caller.request({
    method: 'POST',
    url: RESET,
    payload: body,
    headers: { 'content-type': 'application/json' },
    csrf: options.csrf ?? true,
  });
}

/** Every answer of the API carries the security headers, whichever hook answered it. */
function assertSecurityHeaders(response: Response): void {
  assert.equal(response.headers['x-content-type-options'], 'nosniff');
  assert.equal(response.headers['x-frame-options'], 'DENY');
  assert.equal(response.headers['cache-control'], 'no-store');
}

describe(`POST ${RESET}, one failing check at a time`, () => {
  it('answers each check only once every check before it passes, each answer counted and headed', async (t) => {
    const test = await createTestApp();
    const { client, close } = test;
    t.after(close);
    const anonymous = client();
    // An employee who signed in with a temporary password (docs/rules.md#accounts).
    const pending = await freshAccount(test);
    await test.database.db.query('UPDATE users SET must_change_password = true WHERE id = $1', [pending.id]);
    const temporary = await signedIn(test, pending.email);
    const employee = client();
    assert.equal((await employee.login('alice@example.com')).statusCode, 200);
    const admin = client();
    assert.equal((await admin.login('admin@example.com')).statusCode, 200);
    await anonymous.fetchCsrf();

    const steps: [string, Response, number, string][] = [
      // Everything wrong but the budget: the body's size is the first check that refuses.
      ['over-size, no token', await reset(anonymous, TOO_LARGE, { csrf: false }), 413, 'PAYLOAD_TOO_LARGE'],
      ['malformed, no token', await reset(anonymous, '{"email":', { csrf: false }), 400, 'INVALID_JSON'],
      ['no token, no session', await reset(anonymous, '{}', { csrf: false }), 403, 'CSRF_INVALID'],
      ['a token, no session', await reset(anonymous, '{}'), 401, 'UNAUTHENTICATED'],
      ['a temporary password, no token', await reset(temporary, '{}', { csrf: false }), 403, 'CSRF_INVALID'],
      // Before the role: an employee still to change a temporary password hears that first.
      ['a temporary password', await reset(temporary, '{}'), 403, 'PASSWORD_CHANGE_REQUIRED'],
      ['an employee', await reset(employee, '{}'), 403, 'FORBIDDEN'],
      ['an admin, invalid fields', await reset(admin, '{"mail":1}'), 400, 'VALIDATION_ERROR'],
    ];
    for (const [what, response, status, code] of steps) {
      assertError(response, status, code);
      assertSecurityHeaders(response);
      // The limiter ran first and admitted: its headers are on every later refusal.
      const limits = rateLimitHeaders(response);
      assert.match(limits.policy.name, /^api-(un)?authenticated$/, what);
    }
    assert.equal((await reset(admin, '{"email":"bob@example.com"}')).statusCode, 204);
  });
});

describe('a request the rate limiter refuses', () => {
  it('is answered 429 before its body, CSRF, access or fields are looked at', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m' } });
    t.after(close);
    const anonymous = client();
    assert.equal((await anonymous.get('/api/auth/me')).statusCode, 401);
    for (const body of [TOO_LARGE, '{"email":', '{}']) {
      const response = await reset(anonymous, body, { csrf: false });
      assertRefused(response, 'API_RATE_LIMIT_UNAUTHENTICATED', 'api-unauthenticated');
      assertSecurityHeaders(response);
    }
  });

  it('does no other work: a refused logout leaves the session signed in', async (t) => {
    const { client, clock, close } = await createTestApp({ env: { RATE_LIMIT_AUTHENTICATED: '2/1m' } });
    t.after(close);
    const alice = client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    for (let i = 0; i < 2; i++) assert.equal((await alice.get('/api/auth/me')).statusCode, 200);
    const logout = await alice.request({ method: 'POST', url: '/api/auth/logout' });
    assertRefused(logout, 'API_RATE_LIMIT_AUTHENTICATED', 'api-authenticated');
    assert.equal(logout.headers['set-cookie'], undefined, 'no cookie is cleared');
    clock.advance(60_000);
    assert.equal((await alice.get('/api/auth/me')).statusCode, 200, 'the session was not ended');
  });
});

describe('an /api path that matches no route', () => {
  it('spends the generic bucket and carries the security headers, as a 404 and as a 429', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_UNAUTHENTICATED: '1/1m' } });
    t.after(close);
    const anonymous = client();
    const missing = await anonymous.request({ method: 'POST', url: '/api/nowhere', payload: TOO_LARGE });
    assertError(missing, 404, 'NOT_FOUND');
    assertSecurityHeaders(missing);
    assert.equal(rateLimitHeaders(missing).policy.name, 'api-unauthenticated');
    const refused = await anonymous.get('/api/nowhere');
    assertRefused(refused, 'API_RATE_LIMIT_UNAUTHENTICATED', 'api-unauthenticated');
    assertSecurityHeaders(refused);
    // Outside /api a missing path spends nothing, and has the page's headers.
    const page = await anonymous.get('/nowhere');
    assert.equal(page.statusCode, 404);
    assert.equal(page.headers['ratelimit-policy'], undefined);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
  });
});

describe('PATCH /api/employee/tasks/bulk with an Idempotency-Key', () => {
  const BULK = '/api/employee/tasks/bulk';
  const bulk = (caller: TestClient, key: string, body: string, options: { csrf?: boolean } = {}) =>
    caller.request({
      method: 'PATCH',
      url: BULK,
      payload: body,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      csrf: options.csrf ?? true,
    });
  const BODY = '{"taskIds":[1,2],"assigneeId":2}';

  it('is read before the limiter, so a repeat within its free ones spends nothing; the repeat is answered after CSRF, the body and its fields', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_BULK: '3/1m' } });
    t.after(close);
    const alice = client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const first = await bulk(alice, 'order-1', BODY);
    assert.equal(first.statusCode, 200);
    assert.equal(rateLimitHeaders(first).remaining, 2);

    const repeats: [string, Response, number, string][] = [
      ['a repeat, no token', await bulk(alice, 'order-1', BODY, { csrf: false }), 403, 'CSRF_INVALID'],
      ['a repeat, malformed', await bulk(alice, 'order-1', '{"taskIds":'), 400, 'INVALID_JSON'],
      ['a repeat, invalid fields', await bulk(alice, 'order-1', '{"taskIds":[]}'), 400, 'VALIDATION_ERROR'],
      [
        'a repeat, another body',
        await bulk(alice, 'order-1', '{"taskIds":[3],"assigneeId":2}'),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      ],
    ];
    for (const [what, response, status, code] of repeats) {
      assertError(response, status, code);
      assertSecurityHeaders(response);
      assert.equal(rateLimitHeaders(response).remaining, 2, `${what}: shown the budget, spends none`);
    }
    // A key that is not valid is not read: the limiter charges it, and it is answered with the fields.
    const invalid: [string, Response, number, string][] = [
      ['an invalid key, invalid fields', await bulk(alice, 'clé', '{"taskIds":[]}'), 400, 'VALIDATION_ERROR'],
      ['an invalid key', await bulk(alice, 'clé', BODY), 400, 'IDEMPOTENCY_KEY_INVALID'],
    ];
    for (const [what, response, status, code] of invalid) {
      assertError(response, status, code);
      assert.equal(rateLimitHeaders(response).remaining, what === 'an invalid key' ? 0 : 1, what);
    }
    // The budget is spent: a new key is refused first thing, the repeat is not.
    assertRefused(await bulk(alice, 'order-2', BODY), 'TASK_BULK_RATE_LIMIT', 'task-bulk');
    const replay = await bulk(alice, 'order-1', BODY);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(rateLimitHeaders(replay).remaining, 0);
    // Without a session nothing is read: the caller's address is charged and the answer is a 401.
    const stranger = client();
    await stranger.fetchCsrf();
    const unauthenticated = await bulk(stranger, 'order-1', BODY);
    assertError(unauthenticated, 401, 'UNAUTHENTICATED');
    assert.equal(rateLimitHeaders(unauthenticated).remaining, 2);
  });
});
