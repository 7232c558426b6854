// docs/rules.md#passkeys over HTTP, against a software authenticator.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { FLAGS, SoftAuthenticator } from '../../bench/lib/soft-authenticator.ts';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { ManualClock } from '../../src/clock.ts';
import { SESSION_COOKIE } from '../../src/http/session-cookie.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { createTestApp, type TestApp, type TestAppOptions, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import {
  floodsNoChallengeOut,
  ownerWithPasskey,
  passkeySignIn,
  registerPasskey,
  sendAssertion,
  signInOptions,
  unregisteredAuthenticator,
} from '../helpers/passkeys.ts';
import { assertRefused, rateLimitHeaders } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const MINUTE = 60_000;

async function passkeyApp(t: TestContext, options: TestAppOptions = {}): Promise<TestApp> {
  const app = await createTestApp(options);
  t.after(app.close);
  await app.database.db.query('DELETE FROM security_events');
  return app;
}

/** The security events of these types, oldest first, as [type, email]. */
async function events({ app, database }: TestApp, ...types: string[]): Promise<[string, string | null][]> {
  await app.services.securityEvents.flush();
  const rows = await database.db.query<{ type: string; email: string | null }>(
    'SELECT type, email FROM security_events WHERE type = ANY($1::text[]) ORDER BY id',
    [types],
  );
  return rows.map((row) => [row.type, row.email]);
}

describe('passkey registration and management', () => {
  it('registers a passkey and lists it without its key or counter', async (t) => {
    const app = await passkeyApp(t);
    const { browser } = await ownerWithPasskey(app.client, ALICE);
    const list = await browser.get('/api/auth/passkeys');
    assert.equal(list.statusCode, 200);
    const { passkeys } = list.json<{ passkeys: Record<string, unknown>[] }>();
    assert.equal(passkeys.length, 1);
    assert.deepEqual(Object.keys(passkeys[0]!).sort(), ['createdAt', 'id', 'lastUsedAt', 'name']);
    assert.equal(passkeys[0]!.name, 'Laptop');
    assert.equal(passkeys[0]!.lastUsedAt, null);
    assert.deepEqual(await events(app, 'passkey-added'), [['passkey-added', ALICE]]);
  });

  it('asks for a sign-in within the last 10 minutes: 403 REAUTH_REQUIRED, then a password sign-in opens it again', async (t) => {
    const app = await passkeyApp(t);
    const browser = app.client();
    await browser.login(ALICE);
    app.clock.advance(10 * MINUTE + 1);
    assertError(
      await browser.request({ method: 'POST', url: '/api/auth/passkeys/registration-options' }),
      403,
      'REAUTH_REQUIRED',
    );
    const authenticator = new SoftAuthenticator();
    await browser.login(ALICE);
    const options = await browser.request({ method: 'POST', url: '/api/auth/passkeys/registration-options' });
    assert.equal(options.statusCode, 200);
    app.clock.advance(10 * MINUTE + 1);
    const late = await browser.request({
      method: 'POST',
      url: '/api/auth/passkeys',
      payload: { name: 'Late', response: authenticator.create(options.json()) },
    });
    assertError(late, 403, 'REAUTH_REQUIRED');
    assert.equal((await browser.get('/api/auth/passkeys')).json<{ passkeys: [] }>().passkeys.length, 0);
  });

  it('holds at most 10 passkeys per account: 422 PASSKEY_LIMIT', async (t) => {
    const app = await passkeyApp(t);
    const browser = app.client();
    await browser.login(ALICE);
    const authenticator = new SoftAuthenticator();
    for (let i = 0; i < 10; i++)
      assert.equal((await registerPasskey(browser, authenticator, `Key ${i}`)).statusCode, 201);
    const body = assertError(
      await browser.request({ method: 'POST', url: '/api/auth/passkeys/registration-options' }),
      422,
      'PASSKEY_LIMIT',
    );
    assert.equal(body.max, 10);
  });

  it('refuses a registration answer that does not verify: another origin, no user verification, a used challenge', async (t) => {
    const app = await passkeyApp(t);
    const browser = app.client();
    await browser.login(ALICE);
    const authenticator = new SoftAuthenticator();
    const optionsOf = async () =>
      (await browser.request({ method: 'POST', url: '/api/auth/passkeys/registration-options' })).json<
        Parameters<SoftAuthenticator['create']>[0]
      >();
    const send = (response: unknown) =>
      browser.request({ method: 'POST', url: '/api/auth/passkeys', payload: { name: 'Key', response } });
    assertError(
      await send(authenticator.create(await optionsOf(), { origin: 'http://evil.example' })),
      422,
      'PASSKEY_INVALID',
    );
    assertError(
      await send(authenticator.create(await optionsOf(), { flags: FLAGS.UP | FLAGS.AT })),
      422,
      'PASSKEY_INVALID',
    );
    const options = await optionsOf();
    assert.equal((await send(authenticator.create(options))).statusCode, 201);
    assertError(await send(authenticator.create(options)), 422, 'PASSKEY_INVALID');
    // A challenge of another session does not work either.
    const other = app.client();
    await other.login(ALICE);
    const foreign = authenticator.create(await optionsOf());
    assertError(
      await other.request({
        method: 'POST',
        url: '/api/auth/passkeys',
        payload: { name: 'Key', response: foreign },
      }),
      422,
      'PASSKEY_INVALID',
    );
  });

  it('renames with names of 1–64 characters, and answers 404 NOT_FOUND for anyone else’s passkey', async (t) => {
    const app = await passkeyApp(t);
    const { browser, passkeyId } = await ownerWithPasskey(app.client, ALICE);
    const rename = (name: unknown, client = browser) =>
      client.request({ method: 'PATCH', url: `/api/auth/passkeys/${passkeyId}`, payload: { name } });
    const renamed = await rename('  Phone  ');
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json<{ passkey: { name: string } }>().passkey.name, 'Phone');
    for (const bad of ['', '   ', 'x'.repeat(65), 7]) assertError(await rename(bad), 400, 'VALIDATION_ERROR');
    const bob = app.client();
    await bob.login(BOB);
    assertError(await rename('Mine now', bob), 404, 'NOT_FOUND');
    assertError(
      await bob.request({ method: 'DELETE', url: `/api/auth/passkeys/${passkeyId}` }),
      404,
      'NOT_FOUND',
    );
    assert.equal(
      (await browser.get('/api/auth/passkeys')).json<{ passkeys: { name: string }[] }>().passkeys[0]!.name,
      'Phone',
    );
  });

  it('removes a passkey, which then signs no one in', async (t) => {
    const app = await passkeyApp(t);
    const { browser, authenticator, passkeyId } = await ownerWithPasskey(app.client, ALICE);
    const removed = await browser.request({ method: 'DELETE', url: `/api/auth/passkeys/${passkeyId}` });
    assert.equal(removed.statusCode, 204);
    assertError(await passkeySignIn(app.client(), authenticator), 401, 'INVALID_CREDENTIALS');
    assert.deepEqual(await events(app, 'passkey-removed'), [['passkey-removed', ALICE]]);
  });
});

describe('POST /api/auth/passkey/login', () => {
  it('signs in from a fresh cookie jar as a password login does: user, CSRF token, session and device cookies', async (t) => {
    const app = await passkeyApp(t);
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    const fresh = app.client();
    const answer = await passkeySignIn(fresh, authenticator);
    assert.equal(answer.statusCode, 200, answer.body);
    const body = answer.json<{ user: { email: string }; csrfToken: string }>();
    assert.equal(body.user.email, ALICE);
    assert.ok(fresh.cookie(SESSION_COOKIE) && fresh.cookie(DEVICE_COOKIE));
    assert.equal((await fresh.get('/api/auth/me')).json<{ user: { email: string } }>().user.email, ALICE);
    assert.equal(
      (await fresh.get('/api/csrf-token')).json<{ csrfToken: string }>().csrfToken,
      body.csrfToken,
    );
    const [listed] = (await fresh.get('/api/auth/passkeys')).json<{ passkeys: { lastUsedAt: string }[] }>()
      .passkeys;
    assert.equal(listed!.lastUsedAt, new Date(app.clock.now()).toISOString());
  });

  it('answers request options with a fresh challenge and no allowCredentials', async (t) => {
    const app = await passkeyApp(t);
    const browser = app.client();
    const first = await signInOptions(browser);
    const second = await signInOptions(browser);
    assert.notEqual(first.challenge, second.challenge);
    assert.equal(first.rpId, 'localhost');
    assert.equal((first as Record<string, unknown>).allowCredentials, undefined);
    assert.equal((first as Record<string, unknown>).userVerification, 'required');
    assertError(
      await app.client().request({ method: 'POST', url: '/api/auth/passkey/options' }),
      403,
      'CSRF_INVALID',
    );
  });

  it('refuses a replayed challenge, another browser’s challenge and an expired one with 401 INVALID_CREDENTIALS', async (t) => {
    const app = await passkeyApp(t);
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    const browser = app.client();
    const options = await signInOptions(browser);
    assert.equal((await sendAssertion(browser, authenticator.get(options))).statusCode, 200);
    const replay = app.client();
    await replay.fetchCsrf();
    assertError(await sendAssertion(replay, authenticator.get(options)), 401, 'INVALID_CREDENTIALS');
    // Another browser's challenge: its pre-session is not this one's.
    const thief = app.client();
    await thief.fetchCsrf();
    const stolen = await signInOptions(app.client());
    assertError(await sendAssertion(thief, authenticator.get(stolen)), 401, 'INVALID_CREDENTIALS');
    // Five minutes later a challenge is gone.
    const slow = app.client();
    const late = await signInOptions(slow);
    app.clock.advance(5 * MINUTE);
    assertError(await sendAssertion(slow, authenticator.get(late)), 401, 'INVALID_CREDENTIALS');
  });

  it('refuses a tampered signature, an unknown credential, another origin and an answer without user verification', async (t) => {
    const app = await passkeyApp(t);
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    const stranger = unregisteredAuthenticator();
    const refusedAnswers = [
      await passkeySignIn(app.client(), authenticator, { tamper: true }),
      await passkeySignIn(app.client(), stranger),
      await passkeySignIn(app.client(), authenticator, { origin: 'http://localhost:8080' }),
      await passkeySignIn(app.client(), authenticator, { flags: FLAGS.UP }),
    ];
    const bodies = refusedAnswers.map((answer) => assertError(answer, 401, 'INVALID_CREDENTIALS'));
    assert.equal(new Set(bodies.map((body) => JSON.stringify(body))).size, 1, 'one answer for every failure');
    for (const answer of refusedAnswers) assert.equal(answer.headers['set-cookie'], undefined);
    assert.equal((await passkeySignIn(app.client(), authenticator)).statusCode, 200);
  });

  it('refuses a counter that goes backwards and writes a security event; a forged one writes none', async (t) => {
    const app = await passkeyApp(t);
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    assert.equal((await passkeySignIn(app.client(), authenticator, { counter: 7 })).statusCode, 200);
    assertError(await passkeySignIn(app.client(), authenticator, { counter: 7 }), 401, 'INVALID_CREDENTIALS');
    assertError(
      await passkeySignIn(app.client(), authenticator, { counter: 3, tamper: true }),
      401,
      'INVALID_CREDENTIALS',
    );
    assert.deepEqual(await events(app, 'passkey-counter-refused'), [['passkey-counter-refused', ALICE]]);
    assert.equal((await passkeySignIn(app.client(), authenticator, { counter: 8 })).statusCode, 200);
  });

  it('refuses a disabled account’s passkey like any failure', async (t) => {
    const app = await passkeyApp(t);
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    await app.database.db.query('UPDATE users SET disabled_at = now() WHERE email = $1', [ALICE]);
    t.after(() => app.database.db.query('UPDATE users SET disabled_at = NULL'));
    assertError(await passkeySignIn(app.client(), authenticator), 401, 'INVALID_CREDENTIALS');
  });

  it('counts failures against login-ip, and a known credential’s against its account’s password sign-ins; login-ip refuses', async (t) => {
    const app = await passkeyApp(t, {
      env: { RATE_LIMIT_LOGIN_IP: '3/15m', RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' },
    });
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    const stranger = unregisteredAuthenticator();
    // One address: three unknown credentials fill its budget.
    const attacker = app.client({ remoteAddress: '203.0.113.9' });
    for (let i = 0; i < 3; i++)
      assertError(await passkeySignIn(attacker, stranger), 401, 'INVALID_CREDENTIALS');
    assertRefused(await passkeySignIn(attacker, authenticator), 'LOGIN_RATE_LIMIT', 'login-ip');
    // Alice's credential from two addresses: her account's budget fills for passwords, not for her passkey.
    for (let i = 0; i < 2; i++)
      assertError(
        await passkeySignIn(app.client(), authenticator, { tamper: true }),
        401,
        'INVALID_CREDENTIALS',
      );
    assertRefused(await app.client().login(ALICE), 'LOGIN_RATE_LIMIT', 'login-account');
    assert.equal((await passkeySignIn(app.client(), authenticator)).statusCode, 200);
    // Her passkey leaves the account's counter alone: a guesser gets no fresh budget from it.
    assertRefused(await app.client().login(ALICE), 'LOGIN_RATE_LIMIT', 'login-account');
    assert.equal((await app.client().login(BOB)).statusCode, 200, 'other accounts are not touched');
  });

  it('is never refused by the account’s budget: others’ wrong passwords leave her passkey open on any browser', async (t) => {
    const app = await passkeyApp(t, { env: { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' } });
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    // Her laptop signs in with her passkey once: it is a known device of her account from then on.
    const laptop = app.client();
    assert.equal((await passkeySignIn(laptop, authenticator)).statusCode, 200);
    assert.ok(laptop.cookie(DEVICE_COOKIE));
    // Three wrong passwords from elsewhere lock her account for every browser it never signed in on.
    for (let i = 0; i < 3; i++)
      assertError(await app.client().login(ALICE, 'wrong'), 401, 'INVALID_CREDENTIALS');
    assertRefused(await app.client().login(ALICE), 'LOGIN_RATE_LIMIT', 'login-account');
    // Her passkey still signs her in: from a new phone, and from the laptop with its device cookie.
    const phone = app.client();
    assert.equal((await passkeySignIn(phone, authenticator)).statusCode, 200);
    const laptopAgain = await passkeySignIn(laptop, authenticator);
    assert.equal(laptopAgain.statusCode, 200, laptopAgain.body);
    assert.equal((await laptop.login(ALICE)).statusCode, 200, 'her password on her known laptop, as before');
  });

  it('counts a challenge the service no longer holds against the address, never against the account', async (t) => {
    const app = await passkeyApp(t, {
      env: { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m', RATE_LIMIT_LOGIN_IP: '1/15m' },
    });
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    const slow = app.client();
    const late = await signInOptions(slow);
    app.clock.advance(5 * MINUTE);
    assertError(await sendAssertion(slow, authenticator.get(late)), 401, 'INVALID_CREDENTIALS');
    assertRefused(await passkeySignIn(slow, authenticator), 'LOGIN_RATE_LIMIT', 'login-ip');
    assert.equal((await app.client().login(ALICE)).statusCode, 200, 'her account counted no failure');
  });

  it('never touches a generic bucket: both routes work with the unauthenticated budget spent', async (t) => {
    const app = await passkeyApp(t, { env: { RATE_LIMIT_UNAUTHENTICATED: '1/15m' } });
    const { authenticator } = await ownerWithPasskey(app.client, ALICE);
    const browser = app.client();
    await browser.get('/api/nothing-here');
    assertError(await browser.get('/api/nothing-here'), 429, 'API_RATE_LIMIT_UNAUTHENTICATED');
    assert.equal((await passkeySignIn(browser, authenticator)).statusCode, 200);
  });

  it('answers 400 VALIDATION_ERROR for a body that is not an authentication answer', async (t) => {
    const app = await passkeyApp(t);
    const browser = app.client();
    await browser.fetchCsrf();
    for (const payload of [
      {},
      { response: {} },
      { response: { id: 'a', rawId: 'a', type: 'public-key' } },
      { response: 'x' },
    ])
      assertError(
        await browser.request({ method: 'POST', url: '/api/auth/passkey/login', payload }),
        400,
        'VALIDATION_ERROR',
      );
  });
});

describe('POST /api/auth/passkey/options: challenges no flood can evict', () => {
  it('spends the passkey-options budget per address: 429 LOGIN_RATE_LIMIT with its headers', async (t) => {
    const app = await passkeyApp(t, { env: { RATE_LIMIT_PASSKEY_OPTIONS: '2/1m' } });
    const address = '203.0.113.20';
    const browser = app.client({ remoteAddress: address });
    await browser.fetchCsrf();
    const ask = (client: TestClient) => client.request({ method: 'POST', url: '/api/auth/passkey/options' });
    const first = await ask(browser);
    assert.equal(first.statusCode, 200);
    assert.equal(rateLimitHeaders(first).policy.name, 'passkey-options');
    assert.equal(rateLimitHeaders(first).remaining, 1);
    assert.equal((await ask(browser)).statusCode, 200);
    assertRefused(await ask(browser), 'LOGIN_RATE_LIMIT', 'passkey-options');
    const neighbour = app.client({ remoteAddress: address });
    await neighbour.fetchCsrf();
    assertRefused(await ask(neighbour), 'LOGIN_RATE_LIMIT', 'passkey-options');
    assert.equal((await signInOptions(app.client())).rpId, 'localhost', 'another address has its own budget');
    app.clock.advance(MINUTE);
    assert.equal((await ask(browser)).statusCode, 200);
  });

  it('keeps every live challenge through a flood past the store’s capacity; newcomers get 503 LOGIN_BUSY', async (t) => {
    const clock = new ManualClock();
    const capacity = 12;
    const app = await passkeyApp(t, {
      clock,
      store: new MemoryStore({ clock, sweepIntervalMs: 0, marksMax: capacity }),
    });
    await floodsNoChallengeOut(app, ALICE, capacity);
  });
});
