// Passkey steps over HTTP for the tests: register one on a signed-in browser, sign in with one.
import assert from 'node:assert/strict';
import { type CreationOptions, SoftAuthenticator } from '../../bench/lib/soft-authenticator.ts';
import { PASSKEY_CHALLENGE_TTL_MS } from '../../src/auth/passkeys.ts';
import type { Response, TestApp, TestClient } from './app.ts';
import { assertError } from './http.ts';

type GetSettings = Parameters<SoftAuthenticator['get']>[1];

/** Registers a passkey called `name` on a signed-in browser; returns the 201's answer. */
export async function registerPasskey(
  browser: TestClient,
  authenticator: SoftAuthenticator,
  name = 'Laptop',
): Promise<Response> {
  const options = await browser.request({ method: 'POST', url: '/api/auth/passkeys/registration-options' });
  assert.equal(options.statusCode, 200, options.body);
  const response = authenticator.create(options.json<CreationOptions>());
  return browser.request({ method: 'POST', url: '/api/auth/passkeys', payload: { name, response } });
}

/** A browser signed in to `email` with a new authenticator holding one registered passkey. */
export async function ownerWithPasskey(
  client: () => TestClient,
  email: string,
): Promise<{ browser: TestClient; authenticator: SoftAuthenticator; passkeyId: number }> {
  const browser = client();
  assert.equal((await browser.login(email)).statusCode, 200);
  const authenticator = new SoftAuthenticator();
  const created = await registerPasskey(browser, authenticator);
  assert.equal(created.statusCode, 201, created.body);
  return { browser, authenticator, passkeyId: created.json<{ passkey: { id: number } }>().passkey.id };
}

/** Fresh sign-in options for this browser (fetching a CSRF token first if it has none). */
export async function signInOptions(browser: TestClient): Promise<{ challenge: string; rpId: string }> {
  if (!browser.csrfToken) await browser.fetchCsrf();
  const options = await browser.request({ method: 'POST', url: '/api/auth/passkey/options' });
  assert.equal(options.statusCode, 200, options.body);
  return options.json();
}

/** Sends an answer to the passkey login; a 200 hands the browser its new CSRF token. */
export async function sendAssertion(browser: TestClient, response: unknown): Promise<Response> {
  const answer = await browser.request({
    method: 'POST',
    url: '/api/auth/passkey/login',
    payload: { response },
  });
  if (answer.statusCode === 200) browser.csrfToken = answer.json<{ csrfToken: string }>().csrfToken;
  return answer;
}

/** Options, the authenticator's answer, the login: one passkey sign-in. */
export async function passkeySignIn(
  browser: TestClient,
  authenticator: SoftAuthenticator,
  settings?: GetSettings,
): Promise<Response> {
  return sendAssertion(browser, authenticator.get(await signInOptions(browser), settings));
}

/** An authenticator holding a credential the service never saw (for localhost). */
export function unregisteredAuthenticator(): SoftAuthenticator {
  const stranger = new SoftAuthenticator();
  stranger.create({ challenge: 'AAAA', rp: { id: 'localhost', name: 'x' }, user: { id: 'AAAA', name: 'x' } });
  return stranger;
}

/**
 * A person (`email`, Alice) asks for options; then a flood from ever-new addresses and pre-sessions asks for twice the
 * store's capacity. She still signs in with the challenge she got before; the flood's newcomers
 * past the capacity got 503 LOGIN_BUSY with Retry-After; a browser asking again replaces its own
 * challenge even while the store is full; once the challenges end, there is room again.
 */
export async function floodsNoChallengeOut(app: TestApp, email: string, capacity: number): Promise<void> {
  const { authenticator } = await ownerWithPasskey(app.client, email);
  const alice = app.client();
  const hers = await signInOptions(alice);
  const flood: Response[] = [];
  const flooders: TestClient[] = [];
  for (let i = 0; i < 2 * capacity; i++) {
    const flooder = app.client();
    await flooder.fetchCsrf();
    flooders.push(flooder);
    flood.push(await flooder.request({ method: 'POST', url: '/api/auth/passkey/options' }));
  }
  const signedIn = await sendAssertion(alice, authenticator.get(hers));
  assert.equal(signedIn.statusCode, 200, signedIn.body);
  assert.deepEqual(
    flood.map((answer) => answer.statusCode),
    [...Array(capacity - 1).fill(200), ...Array(capacity + 1).fill(503)],
  );
  const busy = flood.at(-1)!;
  const body = assertError(busy, 503, 'LOGIN_BUSY') as { retryAfter: number };
  assert.equal(busy.headers['retry-after'], String(body.retryAfter));
  assert.ok(body.retryAfter >= 1 && body.retryAfter <= 300, `Retry-After ${body.retryAfter}`);
  assert.equal(busy.headers['cache-control'], 'no-store');
  // Her sign-in freed a place, which the next newcomer takes; the one after is refused again.
  assert.equal((await newBrowserAsks(app)).statusCode, 200);
  assertError(await newBrowserAsks(app), 503, 'LOGIN_BUSY');
  // A browser that holds a challenge may ask again: the new one replaces its own.
  const flooder = flooders[0]!;
  const old = flood[0]!.json<{ challenge: string }>();
  const renewed = await signInOptions(flooder);
  assert.notEqual(renewed.challenge, old.challenge);
  assertError(await sendAssertion(flooder, authenticator.get(old)), 401, 'INVALID_CREDENTIALS');
  assert.equal((await sendAssertion(flooder, authenticator.get(renewed))).statusCode, 200);
  // Five minutes on, every challenge of the flood has ended: room for everyone.
  app.clock.advance(PASSKEY_CHALLENGE_TTL_MS);
  assert.equal((await newBrowserAsks(app)).statusCode, 200);
}

async function newBrowserAsks(app: TestApp): Promise<Response> {
  const browser = app.client();
  await browser.fetchCsrf();
  return browser.request({ method: 'POST', url: '/api/auth/passkey/options' });
}
