// The sign-in form on a busy server (docs/rules.md#the-login-gate), in Chromium: a countdown, then in.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ApiClient, MemoryCookieJar } from '../../src/client/index.ts';
import { systemClock } from '../../src/clock.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { HeldHasher } from '../helpers/held-hasher.ts';

const ALICE = 'alice@example.com';

describe('the sign-in form on a busy server', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('shows LOGIN_BUSY with a countdown, then tries once more by itself and signs in', {
    timeout: 60_000,
  }, async (t) => {
    const hasher = new HeldHasher();
    const base = await startPortal(
      t,
      { LOGIN_HASH_CONCURRENCY: '1', LOGIN_QUEUE_MAX_WAIT: '50ms' },
      systemClock,
      { hasher },
    );
    const page = await openBrowser(t);
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    // Someone else's check holds the only slot.
    hasher.holdChecks();
    const other = () => new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() });
    const running = other()
      .login('flood@example.net', 'a-guess')
      .catch((error: unknown) => error);
    await hasher.untilHeld(1);

    // Alice's attempt waits past the 50 ms bound; the next attempt to arrive has it shed.
    await submitLogin(page, ALICE, DEMO_PASSWORD);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Each arrival is an event at the gate that sheds her waiting attempt; the page solves each
    // LOGIN_BUSY's challenge and comes back (docs/rules.md#proved-work) until its rounds are spent, then counts down.
    const busy = page.locator('#login-error', { hasText: 'Sign-in is very busy right now' });
    const triggers: Promise<unknown>[] = [];
    for (let n = 2; !(await busy.isVisible()) && n < 60; n++) {
      triggers.push(
        other()
          .login(`flood${n}@example.net`, 'another-guess')
          .catch((error: unknown) => error),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await busy.waitFor();
    await page
      .getByRole('timer')
      .filter({ hasText: /Trying again by itself in [12] seconds?\./ })
      .waitFor();
    assert.equal(
      await page.getByLabel('Password').inputValue(),
      DEMO_PASSWORD,
      'the password stays for the retry',
    );

    // The flood passes; the form's own retry, after the countdown, signs alice in.
    hasher.letThrough();
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor({ timeout: 10_000 });
    await Promise.all([running, ...triggers]);
  });
});
