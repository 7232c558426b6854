// The People page in Chromium: add a colleague with a temporary password; edit, disable, enable, reset.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { focused } from '../helpers/focus.ts';
import { COMMON_PASSWORD, NEW_PASSWORD } from '../helpers/passwords.ts';

const ADMIN = 'admin@example.com';
const DANA = 'dana@example.com';

/** Signs the admin in on the People page. */
async function openPeople(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/#people`);
  await submitLogin(page, ADMIN, DEMO_PASSWORD);
  await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
  await page.locator('#people tr[data-person]').first().waitFor();
}

/** Adds a person from the form; answers the temporary password the page shows once. */
async function addPerson(page: Page, email: string, name: string, role = 'Employee'): Promise<string> {
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Role', { exact: true }).selectOption({ label: role });
  await page.getByRole('button', { name: 'Add person' }).click();
  await page.getByRole('heading', { name: `Temporary password for ${name}` }).waitFor();
  return page.getByLabel(`Temporary password for ${email}`).inputValue();
}

const row = (page: Page, email: string) => page.locator(`#people tr[data-person="${email}"]`);

describe('the People page', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('adds a colleague, whose temporary password signs in only to choose a new one (375 px)', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t, { width: 375, height: 800 });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await openPeople(page, base);
    const nav = page.getByRole('navigation', { name: 'Portal pages' });
    assert.equal(await nav.getByRole('link', { name: 'People' }).getAttribute('aria-current'), 'page');
    assert.equal(await page.title(), 'People — Task portal');

    const temporary = await addPerson(page, DANA, 'Dana Scully');
    assert.ok(temporary.length >= 20, `a temporary password of at least 20 characters (${temporary.length})`);
    assert.equal(
      await focused(page),
      'heading "Temporary password for Dana Scully"',
      'the password, shown once, takes focus',
    );
    await page.getByRole('button', { name: 'Copy password' }).click();
    await page.locator('#temporary-password', { hasText: 'Copied to the clipboard.' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), temporary);
    assert.match(
      (await row(page, DANA).textContent()) ?? '',
      /Dana Scully.*Employee.*Must choose a new password/,
    );

    // An email already in use: refused beside the field.
    await page.getByRole('button', { name: 'Done: hide the password' }).click();
    assert.equal(await page.locator('#temporary-password').count(), 0, 'not shown again');
    assert.match(await focused(page), /^status "Dana Scully \(dana@example\.com\) is added\."/);
    await page.getByLabel('Email', { exact: true }).fill(DANA);
    await page.getByLabel('Name', { exact: true }).fill('Another Dana');
    await page.getByRole('button', { name: 'Add person' }).click();
    await page.locator('#add-person-problem', { hasText: 'already exists' }).waitFor();
    assert.equal(await page.getByLabel('Email', { exact: true }).getAttribute('aria-invalid'), 'true');

    // Dana, in her own browser: the temporary password opens only the change-password view.
    const dana = await openBrowser(t);
    await dana.goto(`${base}/#tasks`);
    await submitLogin(dana, DANA, temporary);
    await dana.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor();
    assert.equal(await dana.title(), 'Choose a new password — Task portal');
    assert.equal(await dana.getByRole('link', { name: 'Account' }).count(), 0, 'no way around it');
    assert.equal(await dana.getByRole('navigation', { name: 'Portal pages' }).count(), 0);
    await dana.reload();
    await dana.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor();

    await dana.getByLabel('Temporary password', { exact: true }).fill(temporary);
    await dana.getByLabel('New password', { exact: true }).fill(COMMON_PASSWORD);
    await dana.getByLabel('New password again', { exact: true }).fill(COMMON_PASSWORD);
    await dana.getByRole('button', { name: 'Set my password' }).click();
    await dana.locator('#new-password-problem', { hasText: 'list of common passwords' }).waitFor();

    await dana.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await dana.getByLabel('New password again', { exact: true }).fill(NEW_PASSWORD);
    await dana.getByRole('button', { name: 'Set my password' }).click();
    await dana.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    await dana.reload();
    await dana.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();

    await page.reload();
    await row(page, DANA).waitFor();
    assert.match((await row(page, DANA).textContent()) ?? '', /Active/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scrolling at 375 px (overflow ${overflow} px)`);
  });

  it('edits a name and a role, disables (signed out at once) and enables, and resets a password', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await openPeople(page, base);
    const bob = await openBrowser(t);
    await bob.goto(`${base}/`);
    await submitLogin(bob, 'bob@example.com', DEMO_PASSWORD);
    await bob.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();

    // Edit in place from the keyboard: Enter saves, focus goes back to Edit.
    await page.getByRole('button', { name: 'Edit bob@example.com' }).click();
    assert.equal(await focused(page), 'textbox "Name"');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('Robert Nguyen');
    await page.locator('#people .row-panel select').selectOption({ label: 'Admin' });
    await page.locator('#people .row-panel input').press('Enter');
    await page.locator('#people-outcome', { hasText: 'Robert Nguyen (bob@example.com) is saved.' }).waitFor();
    assert.match((await row(page, 'bob@example.com').textContent()) ?? '', /Robert Nguyen.*Admin/);
    assert.equal(await focused(page), 'button "Edit bob@example.com"');

    // Escape closes the form unsaved.
    await page.getByRole('button', { name: 'Edit bob@example.com' }).click();
    await page.keyboard.type(' Jr');
    await page.keyboard.press('Escape');
    assert.equal(await focused(page), 'button "Edit bob@example.com"');
    assert.equal(await page.locator('#people .row-panel').count(), 0);

    // The admin's own row offers no Disable.
    assert.equal(await page.getByRole('button', { name: `Disable ${ADMIN}` }).count(), 0);

    await page.getByRole('button', { name: 'Disable bob@example.com' }).click();
    await page.locator('#people-outcome', { hasText: 'bob@example.com is disabled' }).waitFor();
    assert.match((await row(page, 'bob@example.com').textContent()) ?? '', /Disabled/);
    assert.equal(await focused(page), 'button "Enable bob@example.com"', 'focus stays on the button');
    await bob.reload();
    await bob.getByRole('heading', { name: 'Sign in' }).waitFor();
    await submitLogin(bob, 'bob@example.com', DEMO_PASSWORD);
    await bob.locator('#login-error', { hasText: 'not correct' }).waitFor();

    await page.getByRole('button', { name: 'Enable bob@example.com' }).click();
    await page.locator('#people-outcome', { hasText: 'bob@example.com is enabled' }).waitFor();

    // A reset asks first, then shows the new temporary password; the old password stops working.
    await page.getByRole('button', { name: 'Reset password of bob@example.com' }).click();
    assert.equal(await focused(page), 'button "Reset the password of Robert Nguyen"');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Temporary password for Robert Nguyen' }).waitFor();
    assert.equal(await focused(page), 'heading "Temporary password for Robert Nguyen"');
    const temporary = await page.getByLabel('Temporary password for bob@example.com').inputValue();
    assert.match((await row(page, 'bob@example.com').textContent()) ?? '', /Must choose a new password/);

    await submitLogin(bob, 'bob@example.com', DEMO_PASSWORD);
    await bob.locator('#login-error', { hasText: 'not correct' }).waitFor();
    await submitLogin(bob, 'bob@example.com', temporary);
    await bob.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor();
  });
});
