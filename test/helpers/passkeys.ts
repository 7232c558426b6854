// Passkey steps over HTTP for the tests: register one on a signed-in browser, sign in with one.
import assert from 'node:assert/strict';
import { type CreationOptions, SoftAuthenticator } from '../../bench/lib/soft-authenticator.ts';
import type { Response, TestClient } from './app.ts';

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
