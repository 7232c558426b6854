// The Admin page in Chromium: an admin unlocks an account, reads a flood as one row; employees never see it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ApiClient, type ApiError, MemoryCookieJar } from '../../src/client/index.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases, testDatabase } from '../helpers/database.ts';

const ADMIN = 'admin@example.com';
const CAROL = 'carol@example.com';

const client = (base: string) => new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() });

async function loginError(base: string, email: string, password: string): Promise<string> {
  try {
    await client(base).login(email, password);
    return 'signed in';
  } catch (error) {
    return (error as ApiError).code;
  }
}

describe('the Admin page', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('shows a lock made by failed logins, unlocks it with one click, and the owner signs in again (375 px)', {
    timeout: 60_000,
  }, async (t) => {
    const base = await startPortal(t, { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' });
    for (let i = 0; i < 3; i++)
      assert.equal(await loginError(base, CAROL, 'not-the-password'), 'INVALID_CREDENTIALS');
    assert.equal(await loginError(base, CAROL, DEMO_PASSWORD), 'LOGIN_RATE_LIMIT', 'carol is locked out');

    const page = await openBrowser(t, { width: 375, height: 800 });
    await page.goto(`${base}/`);
    await submitLogin(page, ADMIN, DEMO_PASSWORD);
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Portal pages' });
    assert.equal(await nav.getByRole('link', { name: 'Tasks' }).getAttribute('aria-current'), 'page');
    await nav.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('heading', { name: 'Admin', level: 1 }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Admin' }).getAttribute('aria-current'), 'page');

    const row = page.locator('#login-locks tr', { hasText: CAROL });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Account.*3 failed sign-ins/);

    // The lock's start is a security event.
    await page.locator('#security-events tr[data-event-type="lock-started"]', { hasText: CAROL }).waitFor();

    // One click, from the keyboard: focus the button and press Enter.
    await page.getByRole('button', { name: `Unlock ${CAROL}` }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#unlock-status', { hasText: `${CAROL} is unlocked` }).waitFor();
    await row.waitFor({ state: 'detached' });
    await page.locator('#security-events tr[data-event-type="admin-reset"]', { hasText: CAROL }).waitFor();

    // Someone signs in to carol's account again and again (written by SQL: fast): past the 100
    // events an account keeps in ten minutes, one row says how many more, and from where.
    const { db } = await testDatabase('embedded');
    await db.query(
      `INSERT INTO security_events (at, type, control, email, address, instance)
       SELECT now(), 'signed-in', 'password', $1, '203.0.113.' || (1 + i % 3), 'test'
         FROM generate_series(1, 130) AS i`,
      [CAROL],
    );
    await page.getByRole('button', { name: 'Refresh events' }).click();
    await page
      .locator('#security-events tr[data-event-type="signed-in"]', {
        hasText:
          /Signed in: \d+ more times from 3 addresses, the last at .*carol@example\.com \(from 203\.0\.113\.\d, 203\.0\.113\.\d, 203\.0\.113\.\d\)/,
      })
      .waitFor();

    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scrolling at 375 px (overflow ${overflow} px)`);

    assert.equal(await loginError(base, CAROL, DEMO_PASSWORD), 'signed in', 'carol signs in again');

    // The page survives a reload where it was.
    await page.reload();
    await page.getByRole('heading', { name: 'Admin', level: 1 }).waitFor();
  });

  it('is never shown to an employee: no navigation, and #admin opens Tasks', {
    timeout: 60_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await page.goto(`${base}/#admin`);
    await submitLogin(page, 'alice@example.com', DEMO_PASSWORD);
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Portal pages' }).count(), 0);
    assert.equal(await page.getByRole('link', { name: 'Admin' }).count(), 0);
    assert.equal(await page.getByRole('heading', { name: 'Admin' }).count(), 0);
  });
});
