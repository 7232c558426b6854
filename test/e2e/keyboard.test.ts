// The portal from the keyboard alone, in Chromium: each view's title, form errors tied to their fields, and where focus lands after each action.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { focused } from '../helpers/focus.ts';

const ADMIN = 'admin@example.com';

/** The attributes that tie a field to its error message. */
const fieldState = (page: Page, label: string) =>
  page.getByLabel(label, { exact: true }).evaluate((field) => ({
    invalid: field.getAttribute('aria-invalid'),
    describedBy: field.getAttribute('aria-describedby'),
  }));

describe('the portal from the keyboard', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('titles each view after itself, and ties a refused sign-in to both fields', {
    timeout: 60_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await page.title(), 'Sign in — Task portal');
    assert.deepEqual(await fieldState(page, 'Email'), { invalid: null, describedBy: null });

    await submitLogin(page, ADMIN, 'not-the-password');
    await page.locator('#login-error', { hasText: 'The email or password is not correct.' }).waitFor();
    for (const label of ['Email', 'Password'])
      assert.deepEqual(
        await fieldState(page, label),
        { invalid: 'true', describedBy: 'login-error' },
        `${label} is marked invalid and described by the message`,
      );
    assert.equal(await focused(page), 'textbox "Password"', 'focus waits in the emptied password field');

    await page.keyboard.type(DEMO_PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    assert.equal(await page.title(), 'Tasks — Task portal');
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('heading', { name: 'Admin', level: 1 }).waitFor();
    assert.equal(await page.title(), 'Admin — Task portal');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await page.title(), 'Sign in — Task portal');
  });
});
