// The Account page's security in Chromium: a new password, a refused one, ended sessions, the activity.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ApiClient, type ApiError, MemoryCookieJar } from '../../src/client/index.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases, testDatabase } from '../helpers/database.ts';
import { focused } from '../helpers/focus.ts';
import { COMMON_PASSWORD, NEW_PASSWORD } from '../helpers/passwords.ts';

const ALICE = 'alice@example.com';

/** Signs `page` in as `email` and opens the Account page. */
async function openAccount(page: Page, base: string, email = ALICE, password = DEMO_PASSWORD): Promise<void> {
  await page.goto(`${base}/#account`);
  await submitLogin(page, email, password);
  await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
  await page.locator('#sessions li').first().waitFor();
}

/** What signing in with `password` answers: 'signed in' or the refusal's code. */
async function signInAnswer(base: string, email: string, password: string): Promise<string> {
  try {
    await new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() }).login(email, password);
    return 'signed in';
  } catch (error) {
    return (error as ApiError).code;
  }
}

/** The ARIA state of a field: whether it is marked invalid, and the words it is described by. */
const fieldState = (page: Page, label: string) =>
  page.getByLabel(label, { exact: true }).evaluate((field) => ({
    invalid: field.getAttribute('aria-invalid'),
    describedBy: (field.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  }));

async function fillPasswordForm(page: Page, current: string, next: string, again = next): Promise<void> {
  await page.getByLabel('Current password', { exact: true }).fill(current);
  await page.getByLabel('New password', { exact: true }).fill(next);
  await page.getByLabel('New password again', { exact: true }).fill(again);
  await page.getByRole('button', { name: 'Change password' }).click();
}

describe('the Account page: password, sessions, devices, activity', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('refuses a common password with its reason beside the field, then changes it: the other browser is signed out at once', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t, { width: 375, height: 800 });
    const other = await openBrowser(t);
    await openAccount(other, base);
    await openAccount(page, base);
    assert.equal(await page.locator('#sessions li').count(), 2, 'both browsers are listed');
    assert.equal(await page.locator('#sessions li[data-session-current="true"]').count(), 1);

    // A common password: refused, the reason beside the field, the field marked and focused.
    await fillPasswordForm(page, DEMO_PASSWORD, COMMON_PASSWORD);
    await page.locator('#new-password-problem', { hasText: 'list of common passwords' }).waitFor();
    const refused = await fieldState(page, 'New password');
    assert.equal(refused.invalid, 'true');
    assert.match(refused.describedBy, /list of common passwords/, 'the field is described by its refusal');
    assert.equal(await focused(page), 'textbox "New password"', 'focus goes to the refused field');
    // Typing there again takes the refusal away: it was about the old text.
    await page.getByLabel('New password', { exact: true }).pressSequentially('x');
    assert.equal(await page.locator('#new-password-problem').textContent(), '');
    assert.notEqual((await fieldState(page, 'New password')).invalid, 'true');

    // A guessable one: refused as weak, beside the field, saying what makes it easy to guess.
    await fillPasswordForm(page, DEMO_PASSWORD, 'abcabcabcabc');
    await page.locator('#new-password-problem', { hasText: 'easy to guess' }).waitFor();
    assert.match((await fieldState(page, 'New password')).describedBy, /group of characters repeated/);

    // Two copies that differ: said beside the second, nothing sent.
    await fillPasswordForm(page, DEMO_PASSWORD, NEW_PASSWORD, `${NEW_PASSWORD}!`);
    await page.locator('#new-password-again-problem', { hasText: 'not the same' }).waitFor();
    assert.equal(await focused(page), 'textbox "New password again"');

    // A wrong current password: beside the current password.
    await fillPasswordForm(page, 'not-the-password', NEW_PASSWORD);
    await page.locator('#current-password-problem', { hasText: 'not correct' }).waitFor();
    assert.equal((await fieldState(page, 'Current password')).invalid, 'true');

    await fillPasswordForm(page, DEMO_PASSWORD, NEW_PASSWORD);
    await page.locator('#password-outcome', { hasText: 'Your password is changed' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#sessions li').length === 1);
    assert.equal(
      await page.getByLabel('New password', { exact: true }).inputValue(),
      '',
      'the form is emptied',
    );
    assert.equal(await page.locator('#new-password-problem').textContent(), '', 'the old refusal is gone');

    // The other browser's next request finds its session ended: back to Sign in, told why.
    await other.getByRole('button', { name: 'Refresh activity' }).click();
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();
    await other.getByText('Your session has ended. Sign in again.').waitFor();

    // This browser stays signed in (its session rotated), on the new password only.
    await page.reload();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.locator('#account-activity tr[data-event-type="password-changed"]').first().waitFor();
    assert.doesNotMatch(
      (await page
        .locator('#account-activity tr[data-event-type="password-changed"]')
        .first()
        .textContent()) ?? '',
      /admin/,
      'her own change is not said to be an admin’s',
    );
    assert.equal(await signInAnswer(base, ALICE, DEMO_PASSWORD), 'INVALID_CREDENTIALS');
    assert.equal(await signInAnswer(base, ALICE, NEW_PASSWORD), 'signed in');
  });

  it('ends another session and forgets a device from the Account page; a stale page is told it already ended', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    const other = await openBrowser(t);
    await openAccount(other, base);
    await openAccount(page, base);

    // Both browsers signed in before: two known devices, two sessions.
    await page.locator('#devices li').nth(1).waitFor();
    const otherSession = page.locator('#sessions li:not([data-session-current])');
    await otherSession.getByRole('button', { name: /^End session: Chrome/ }).click();
    await page.locator('#sessions-outcome', { hasText: 'is signed out' }).waitFor();
    await otherSession.waitFor({ state: 'detached' });
    assert.match(
      await focused(page),
      /^status ".* is signed out\."/,
      'the gone button handed focus to the outcome',
    );

    await other.getByRole('button', { name: 'Refresh activity' }).click();
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();

    // Forget the first device listed: one fewer, said in its live region.
    const devices = page.locator('#devices li');
    await devices
      .first()
      .getByRole('button', { name: /^Forget / })
      .click();
    await page.locator('#devices-outcome', { hasText: 'is forgotten' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#devices li').length === 1);

    // A page out of date: the other browser signs in again, the list shows it, and it signs out by
    // itself before this page ends it.
    await submitLogin(other, ALICE, DEMO_PASSWORD);
    await other.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Refresh activity' }).click();
    await page.reload();
    await page.locator('#sessions li:not([data-session-current])').waitFor();
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page
      .locator('#sessions li:not([data-session-current])')
      .getByRole('button', { name: /^End session: Chrome/ })
      .click();
    await page.locator('#sessions-problem', { hasText: 'That session had already ended' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#sessions li').length === 1);

    // The activity names what was done.
    await page.getByRole('button', { name: 'Refresh activity' }).click();
    await page.locator('#account-activity tr[data-event-type="session-ended"]').first().waitFor();
    await page.locator('#account-activity tr[data-event-type="device-forgotten"]').first().waitFor();

    // Someone signs in to the account again and again (written by SQL: fast): past the 100 events
    // an account keeps in ten minutes, the repeats come as one row, in words.
    const { db } = await testDatabase('embedded');
    await db.query(
      `INSERT INTO security_events (at, type, control, email, address, instance)
       SELECT now(), 'signed-in', 'password', $1, '203.0.113.' || (1 + i % 2), 'test'
         FROM generate_series(1, 130) AS i`,
      [ALICE],
    );
    await page.getByRole('button', { name: 'Refresh activity' }).click();
    const summary = page.locator('#account-activity tr[data-event-type="signed-in"]', {
      hasText: /Signed in: \d+ more times from 2 addresses, the last at/,
    });
    await summary.waitFor();
    assert.match(
      await summary.locator('td[data-label="From address"]').innerText(),
      /^203\.0\.113\.\d, 203\.0\.113\.\d$/,
    );
  });
});
