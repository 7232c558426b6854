// axe-core over every view of the portal in Chromium, at 1280 and 375 px: WCAG 2.0–2.2 A/AA.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ApiClient, MemoryCookieJar } from '../../src/client/index.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { axeViolations } from '../helpers/axe.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases } from '../helpers/database.ts';

const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 375, height: 800 },
];

/** Fails with every violation listed, naming the view and the width; waits for every list to settle first. */
async function assertNoViolations(page: Page, view: string): Promise<void> {
  // A list that is loading is dimmed on purpose; what is checked is the page at rest.
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
  const width = page.viewportSize()?.width;
  assert.deepEqual(await axeViolations(page), [], `axe finds no violation on ${view} at ${width} px`);
}

describe('axe over every view', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  for (const viewport of WIDTHS) {
    it(`finds nothing on Sign in, Tasks (a client filter, a selection, an import), Admin and Account at ${viewport.width} px`, {
      timeout: 180_000,
    }, async (t) => {
      // Carol locked out, so that the Admin page shows a lock and its security event.
      const base = await startPortal(t, { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' });
      for (let attempt = 0; attempt < 3; attempt++)
        await new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() })
          .login('carol@example.com', 'not-the-password')
          .catch(() => {});
      const page = await openBrowser(t, viewport);
      await page.goto(`${base}/`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await assertNoViolations(page, 'Sign in');
      // A refused sign-in: the fields marked invalid, the message shown.
      await submitLogin(page, 'admin@example.com', 'not-the-password');
      await page.locator('#login-error', { hasText: 'not correct' }).waitFor();
      await assertNoViolations(page, 'Sign in, refused');

      await page.getByLabel('Password').fill(DEMO_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('tr[data-task-id="1"]').waitFor();
      await page.getByLabel('Client', { exact: true }).selectOption({ label: 'Globex Corporation' });
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.locator('tr[data-task-id="1"]').waitFor({ state: 'detached' });
      for (const id of [2, 5, 8])
        await page.getByRole('checkbox', { name: new RegExp(`^Select task ${id}:`) }).check();
      await page.getByLabel('New assignee').selectOption({ label: 'Bob Nguyen' });
      await assertNoViolations(page, 'Tasks');
      await page.getByRole('button', { name: 'Reassign 3 tasks' }).click();
      await page.locator('#bulk-outcome', { hasText: '3 succeeded' }).waitFor();
      // The outcome shows before the table's reload starts (it dims the rows): wait for it to land.
      await page.locator('tr[data-task-id="2"] td.assignee', { hasText: 'Bob Nguyen' }).waitFor();
      await assertNoViolations(page, 'Tasks, after a reassignment');

      // An import on its way (its request held until axe has looked), then refused row by row.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route('**/api/employee/tasks/import', async (route) => {
        await held;
        await route.continue();
      });
      await page.getByLabel('CSV file to import').setInputFiles({
        name: 'wrong.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from('client,title\r\nNowhere Inc,A task\r\nInitech,\r\n'),
      });
      await page.getByRole('button', { name: 'Import CSV' }).click();
      await page.getByRole('progressbar', { name: 'Sending wrong.csv' }).waitFor();
      await assertNoViolations(page, 'Tasks, an import on its way');
      release();
      await page.locator('#import-rows li').nth(1).waitFor();
      await assertNoViolations(page, 'Tasks, an import refused row by row');

      await page.getByRole('link', { name: 'Admin' }).click();
      await page.locator('#login-locks tr', { hasText: 'carol@example.com' }).waitFor();
      await page.locator('#security-events tr[data-event-type="lock-started"]').first().waitFor();
      await assertNoViolations(page, 'Admin');

      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
      await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
      await page.locator('#sessions li').first().waitFor();
      await assertNoViolations(page, 'Account');
    });

    it(`finds nothing on People (a temporary password, a row's form open), Account (a refused password) and Choose a new password at ${viewport.width} px`, {
      timeout: 180_000,
    }, async (t) => {
      const base = await startPortal(t);
      const page = await openBrowser(t, viewport);
      await page.goto(`${base}/#people`);
      await submitLogin(page, 'admin@example.com', DEMO_PASSWORD);
      await page.locator('#people tr[data-person]').first().waitFor();
      await assertNoViolations(page, 'People');
      await page.getByLabel('Email', { exact: true }).fill('grace@example.com');
      await page.getByLabel('Name', { exact: true }).fill('Grace Hopper');
      await page.getByRole('button', { name: 'Add person' }).click();
      await page.locator('#temporary-password').waitFor();
      const temporary = await page.getByLabel('Temporary password for grace@example.com').inputValue();
      await page.getByRole('button', { name: 'Edit bob@example.com' }).click();
      await assertNoViolations(page, 'People, a temporary password shown and a form open');
      await page.getByRole('button', { name: 'Passkeys of bob@example.com' }).click();
      await page.getByText('Bob Nguyen has no passkeys.').waitFor();
      await page.getByRole('button', { name: 'Reset password of carol@example.com' }).click();
      await assertNoViolations(page, 'People, passkeys listed and a reset to confirm');

      await page.getByRole('link', { name: 'Account' }).click();
      await page.locator('#sessions li').first().waitFor();
      await page.getByLabel('Current password', { exact: true }).fill('not-the-password');
      await page.getByLabel('New password', { exact: true }).fill('violet tram orbit 92');
      await page.getByLabel('New password again', { exact: true }).fill('violet tram orbit 93');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.locator('#new-password-again-problem', { hasText: 'not the same' }).waitFor();
      await assertNoViolations(page, 'Account, a refused password');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await submitLogin(page, 'grace@example.com', temporary);
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      await assertNoViolations(page, 'Choose a new password');
    });

    it(`finds nothing on New task (a refused field), a task's view (a conflict, its history) and Clients (a name taken) at ${viewport.width} px`, {
      timeout: 180_000,
    }, async (t) => {
      const base = await startPortal(t);
      const page = await openBrowser(t, viewport);
      await page.goto(`${base}/#tasks`);
      await submitLogin(page, 'admin@example.com', DEMO_PASSWORD);
      await page.locator('tr[data-task-id="1"]').waitFor();
      await page.getByRole('button', { name: 'New task' }).click();
      const form = page.locator('form.task-form');
      await form.getByLabel('Client').selectOption({ label: 'Initech' });
      await form.getByLabel('Title').fill('Control\u0007character');
      await form.getByRole('button', { name: 'Create task' }).click();
      await page.locator('#new-task-field-title-problem').waitFor();
      await assertNoViolations(page, 'New task, a refused title');

      // Task 4 changed by someone else after it was loaded: the conflict panel and the history.
      await page.goto(`${base}/#task/4`);
      await page.getByLabel(/^Title/).waitFor();
      const other = new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() });
      await other.login('alice@example.com', DEMO_PASSWORD);
      await other.editTask(4, { priority: 'high' }, (await other.getTask(4)).etag);
      await page.getByLabel(/^Description/).fill('Typed before the conflict');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.locator('#task-conflict').waitFor();
      await page.locator('#task-history > li').first().waitFor();
      await assertNoViolations(page, "A task's view, a conflict and its history");

      await page.goto(`${base}/#clients`);
      await page.locator('#clients tr', { hasText: 'Initech' }).waitFor();
      await page.getByLabel('Client name').fill('INITECH');
      await page.getByRole('button', { name: 'Add client' }).click();
      await page.locator('#add-client-problem').waitFor();
      await page.getByRole('button', { name: 'Rename Globex Corporation' }).click();
      await assertNoViolations(page, 'Clients, a name taken and a rename open');
    });
  }
});
