// docs/rules.md#passkeys in Chromium with a virtual authenticator: add a passkey, sign in with it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases } from '../helpers/database.ts';

const ALICE = 'alice@example.com';

/**
 * A platform authenticator in the page's browser (the DevTools protocol's WebAuthn domain): it
 * holds discoverable credentials and verifies its user, with presence answered by itself.
 */
async function virtualAuthenticator(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
    add: (
      credential: Awaited<ReturnType<typeof cdp.send<'WebAuthn.getCredentials'>>>['credentials'][number],
    ) => cdp.send('WebAuthn.addCredential', { authenticatorId, credential }),
  };
}

/**
 * Signs in with the passkey the page's authenticator holds, on the sign-in page that `arrive` opens,
 * and waits to be signed in. The virtual authenticator answers the sign-in form's conditional
 * (autofill) request by itself, as a person picking the passkey from autofill would, and it may do
 * so before any check of the page could see the form: so the sign-in is awaited as the response it
 * is, watched from before `arrive`. Where autofill has not answered within 3 s, the button asks.
 */
async function signInWithPasskey(page: Page, arrive: () => Promise<unknown>): Promise<void> {
  const answer = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/auth/passkey/login', {
    timeout: 60_000,
  });
  await arrive();
  const byAutofill = await Promise.race([
    answer.then(
      () => true,
      () => false,
    ),
    delay(3000).then(() => false),
  ]);
  if (!byAutofill) await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  const response = await answer;
  assert.equal(response.status(), 200, await response.text());
  // Signed in, on the page the URL names (the Account page after signing out of it).
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

describe('passkeys in the portal', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('adds a passkey on the Account page, signs out, signs in with it; a synced copy signs in a new browser (375 px)', {
    timeout: 90_000,
  }, async (t) => {
    // WebAuthn takes `localhost` as an RP ID, never an address.
    const base = (await startPortal(t)).replace('127.0.0.1', 'localhost');
    const page = await openBrowser(t, { width: 375, height: 800 });
    const authenticator = await virtualAuthenticator(page);
    await page.goto(`${base}/`);
    assert.equal(await page.getByLabel('Email').getAttribute('autocomplete'), 'username webauthn');
    await submitLogin(page, ALICE, DEMO_PASSWORD);
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    assert.equal(await page.title(), 'Account — Task portal');
    await page.getByLabel('Name of the new passkey').fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.locator('#passkeys-outcome', { hasText: 'Passkey “Work laptop” added.' }).waitFor();
    await page.getByRole('list', { name: 'Your passkeys' }).getByText('Work laptop').waitFor();

    // Rename from the keyboard: the form opens in place, Enter saves, focus comes back.
    await page.getByRole('button', { name: 'Rename Work laptop' }).click();
    await page.getByLabel('New name for “Work laptop”').fill('Laptop');
    await page.keyboard.press('Enter');
    await page.locator('#passkeys-outcome', { hasText: 'Passkey renamed to “Laptop”.' }).waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Rename Laptop');

    // Signing out opens the sign-in form, whose autofill request the authenticator may answer at once.
    await signInWithPasskey(page, () => page.getByRole('button', { name: 'Sign out' }).click());

    // The same credential in another browser (a synced passkey): a new device, signed in.
    const [credential] = await authenticator.credentials();
    assert.ok(credential, 'the authenticator holds the passkey');
    const other = await openBrowser(t, { width: 375, height: 800 });
    await (await virtualAuthenticator(other)).add(credential);
    await signInWithPasskey(other, () => other.goto(`${base}/`));
    const cookies = await other.context().cookies(`${base}/api/auth/`);
    assert.ok(
      cookies.some((cookie) => cookie.name === DEVICE_COOKIE),
      'the new browser is a known device now',
    );
  });
});
