// The portal from the keyboard alone, in Chromium: titles, errors tied to fields, where focus lands.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { ApiClient, MemoryCookieJar } from '../../src/client/index.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { focused, Walk } from '../helpers/focus.ts';

const ADMIN = 'admin@example.com';
const ALICE = 'alice@example.com';
const REPO = fileURLToPath(new URL('../../', import.meta.url));

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
    timeout: 180_000,
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
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    assert.equal(await page.title(), 'People — Task portal');
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    assert.equal(await page.title(), 'Account — Task portal');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await page.title(), 'Sign in — Task portal');

    // A temporary password opens the change-password view, titled after itself, its heading focused.
    const admin = new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() });
    await admin.login(ADMIN, DEMO_PASSWORD);
    const { temporaryPassword } = await admin.createUser({
      email: 'erin@example.com',
      name: 'Erin',
      role: 'employee',
    });
    await submitLogin(page, 'erin@example.com', temporaryPassword);
    await page.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor();
    assert.equal(await page.title(), 'Choose a new password — Task portal');
    assert.equal(await focused(page), 'heading "Choose a new password"');
  });
});

describe('the People and Account pages from the keyboard', { skip: skipWithoutChromium() }, () => {
  before(() => ensurePortalBuilt({ quiet: true }));
  after(closeTestDatabases);

  it('adds a person, copies the temporary password and hides it, without focus falling to the page', {
    timeout: 180_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const walk = new Walk(page);
    t.after(async () => {
      await mkdir(join(REPO, 'test-results'), { recursive: true });
      await writeFile(join(REPO, 'test-results', 'keyboard-walk-people.txt'), `${walk.lines.join('\n')}\n`);
    });
    await page.goto(`${base}/#people`);
    await submitLogin(page, ADMIN, DEMO_PASSWORD);
    await page.locator('#people tr[data-person]').first().waitFor();
    assert.equal(await walk.note('the People page opens'), 'heading "People"');
    assert.equal(await walk.press('Tab'), 'textbox "Email"');
    await walk.type('frank@example.com');
    assert.equal(await walk.press('Tab'), 'textbox "Name"');
    await walk.type('Frank Castle');
    assert.equal(await walk.press('Tab'), 'combobox "Role"');
    assert.equal(await walk.press('Tab'), 'button "Add person"');
    assert.equal(
      await walk.press('Enter', () => page.locator('#temporary-password').waitFor()),
      'heading "Temporary password for Frank Castle"',
      'the password shown once takes focus',
    );
    assert.equal(await walk.press('Tab'), 'textbox "Temporary password for frank@example.com"');
    assert.equal(await walk.press('Tab'), 'button "Copy password"');
    await walk.press('Enter', () => page.locator('#temporary-password', { hasText: 'Copied' }).waitFor());
    assert.equal(await walk.press('Tab'), 'button "Done: hide the password"');
    assert.match(
      await walk.press('Enter', () => page.locator('#temporary-password').waitFor({ state: 'detached' })),
      /^status "Frank Castle \(frank@example\.com\) is added\."/,
      'the gone panel handed focus to the outcome',
    );
    // Into the new row's buttons: Edit opens its form in place, Escape brings focus back.
    await page.getByRole('button', { name: 'Edit frank@example.com' }).focus();
    assert.equal(await walk.press('Enter'), 'textbox "Name"');
    assert.equal(await walk.press('Escape'), 'button "Edit frank@example.com"');
    assert.equal(await walk.press('Tab'), 'button "Disable frank@example.com"');
    assert.equal(await walk.press('Tab'), 'button "Reset password of frank@example.com"');
    assert.equal(await walk.press('Enter'), 'button "Reset the password of Frank Castle"');
    assert.equal(await walk.press('Escape'), 'button "Reset password of frank@example.com"');
  });

  it('walks the Account page: its password form ties a refusal to the field and keeps focus in it', {
    timeout: 180_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await page.goto(`${base}/#account`);
    await submitLogin(page, ALICE, DEMO_PASSWORD);
    await page.locator('#sessions li').first().waitFor();
    assert.equal(await focused(page), 'heading "Account"');
    assert.equal(await page.title(), 'Account — Task portal');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'textbox "Current password"');
    await page.keyboard.type(DEMO_PASSWORD);
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'textbox "New password"');
    await page.keyboard.type('short');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'textbox "New password again"');
    await page.keyboard.type('short');
    await page.keyboard.press('Enter');
    await page.locator('#new-password-problem', { hasText: 'too short' }).waitFor();
    assert.deepEqual(await fieldState(page, 'New password'), {
      invalid: 'true',
      describedBy: 'new-password-problem new-password-hint',
    });
    assert.equal(await focused(page), 'textbox "New password"');
  });
});

describe('a keyboard-only walk', { skip: skipWithoutChromium() }, () => {
  before(() => ensurePortalBuilt({ quiet: true }));
  after(closeTestDatabases);

  it('signs in, filters, selects, reassigns, pages and signs out without focus ever falling to the page', {
    timeout: 180_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    const walk = new Walk(page);
    // The walk is kept even when a step fails: it shows where focus went instead.
    t.after(async () => {
      await mkdir(join(REPO, 'test-results'), { recursive: true });
      await writeFile(join(REPO, 'test-results', 'keyboard-walk.txt'), `${walk.lines.join('\n')}\n`);
    });
    const row = (id: number) => page.locator(`tr[data-task-id="${id}"]`);
    await page.goto(`${base}/`);
    await page.waitForFunction(() => document.activeElement?.id === 'login-title');
    assert.equal(await walk.note('the Sign in page opens'), 'heading "Sign in"');
    assert.equal(await walk.press('Tab'), 'textbox "Email"');
    await walk.type(ALICE);
    assert.equal(await walk.press('Tab'), 'textbox "Password"');
    await page.keyboard.type(DEMO_PASSWORD);
    walk.lines.push(`${'type the password'.padEnd(34)} → textbox "Password"`);
    assert.equal(
      await walk.press('Enter', () => row(1).waitFor()),
      'heading "Tasks"',
      'the Tasks page takes focus to its heading',
    );
    assert.equal(await page.title(), 'Tasks — Task portal');

    // The skip links come first, shown while focused.
    assert.equal(await walk.press('Tab'), 'link "Skip to the task list"');
    const skip = await page.getByRole('link', { name: 'Skip to the task list' }).boundingBox();
    assert.ok(
      skip && skip.width > 40 && skip.height > 20,
      `the focused skip link shows (${JSON.stringify(skip)})`,
    );
    assert.equal(await walk.press('Tab'), 'link "Skip to the pages"');
    assert.equal(await walk.press('Tab'), 'button "New task"');
    assert.equal(await walk.press('Tab'), 'textbox "Search"');
    assert.equal(await walk.press('Tab'), 'combobox "Client"');
    await walk.type('Ini');
    for (const name of ['Assignee', 'Status', 'Sort', 'Per page'])
      assert.equal(await walk.press('Tab'), `combobox "${name}"`);
    assert.equal(await walk.press('Tab'), 'button "Apply filters"');
    assert.equal(
      await walk.press('Enter', () => row(1).waitFor({ state: 'detached' })),
      'button "Apply filters"',
      'focus stays on the button while the filtered list loads and after',
    );
    await page.locator('#results-status', { hasText: '50 tasks on page 1.' }).waitFor();

    // Export and import, between the filters and the reassignment.
    assert.equal(await walk.press('Tab'), 'link "Export CSV"');
    assert.equal(await walk.press('Tab'), 'textbox "CSV file to import"');
    assert.equal(await walk.press('Tab'), 'button "Import CSV"');
    assert.equal(await walk.press('Tab'), 'combobox "New assignee"');
    await walk.type('Bob');
    assert.equal(
      await walk.press('Tab'),
      'checkbox "Select all on this page (at most 50)"',
      'Reassign is disabled',
    );
    for (const id of [3, 6, 9]) {
      // Each row's title is a link to the task's own view, between one checkbox and the next.
      if (id !== 3) assert.match(await walk.press('Tab'), /^link "/);
      assert.match(await walk.press('Tab'), new RegExp(`^checkbox "Select task ${id}:`));
      await walk.press('Space');
    }
    await page.locator('#selection-status', { hasText: '3 of at most 50 selected.' }).waitFor();
    const back = [
      /^link "/,
      /task 6/,
      /^link "/,
      /task 3/,
      /Select all/,
      /Clear selection/,
      /Reassign 3 tasks/,
    ];
    for (const expected of back) assert.match(await walk.press('Shift+Tab'), expected);
    assert.match(
      await walk.press('Enter', () =>
        page
          .locator('#bulk-outcome', { hasText: '3 succeeded, 0 failed. Reassigned to Bob Nguyen.' })
          .waitFor(),
      ),
      /^status "3 succeeded, 0 failed\. Reassigned to Bob Nguyen\./,
      'the disabled button handed focus to the outcome',
    );
    assert.match(await walk.press('Tab'), /^checkbox "Select all/, 'the next Tab goes on from the outcome');

    // Back up to the second skip link, and on to the pager.
    for (let presses = 0; presses < 13; presses++) await walk.press('Shift+Tab');
    assert.equal(await focused(page), 'link "Skip to the pages"');
    assert.equal(await walk.press('Enter'), 'navigation "Pages"');
    assert.equal(await walk.press('Tab'), 'button "Next page"', 'Previous page is disabled on page 1');
    assert.equal(
      await walk.press('Enter', () =>
        page.locator('#results-status', { hasText: '16 tasks on page 2.' }).waitFor(),
      ),
      'button "Previous page"',
      'Next page, disabled on the last page, handed focus to Previous page',
    );

    // Past the end of the page, Tab leaves it for the browser's own controls, then comes round to the top bar.
    assert.equal(await walk.press('Tab'), 'body');
    assert.equal(await walk.press('Tab'), 'link "Account"');
    assert.equal(await walk.press('Tab'), 'button "Sign out"');
    assert.equal(
      await walk.press('Enter', () => page.getByRole('heading', { name: 'Sign in' }).waitFor()),
      'heading "Sign in"',
    );
    assert.equal(await page.title(), 'Sign in — Task portal');
  });
});

describe('the Tasks page at 375 px', { skip: skipWithoutChromium() }, () => {
  before(() => ensurePortalBuilt({ quiet: true }));
  after(closeTestDatabases);

  it('keeps every client name whole in the picker and the pager on one line', {
    timeout: 180_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t, { width: 375, height: 800 });
    await page.goto(`${base}/`);
    await submitLogin(page, ALICE, DEMO_PASSWORD);
    await page.locator('tr[data-task-id="1"]').waitFor();

    // Each name's width in the picker's own font, against the room its box leaves beside the arrow.
    const picker = await page.getByLabel('Client', { exact: true }).evaluate((select: HTMLSelectElement) => {
      const style = getComputedStyle(select);
      const context = document.createElement('canvas').getContext('2d')!;
      context.font = style.font;
      const arrow = 24;
      const room =
        select.clientWidth -
        Number.parseFloat(style.paddingLeft) -
        Number.parseFloat(style.paddingRight) -
        arrow;
      return [...select.options].map((option) => ({
        name: option.text,
        fits: context.measureText(option.text).width <= room,
      }));
    });
    assert.deepEqual(
      picker.filter((option) => !option.fits).map((option) => option.name),
      [],
      'no client name is cut',
    );

    const pager = await page.locator('#pager').evaluate((nav) => {
      const items = [...nav.children].map((child) => child.getBoundingClientRect());
      return { rows: new Set(items.map((item) => Math.round((item.top + item.bottom) / 2))).size };
    });
    const button = await page.getByRole('button', { name: 'Next page' }).evaluate((element) => {
      const style = getComputedStyle(element);
      return { height: element.getBoundingClientRect().height, line: Number.parseFloat(style.lineHeight) };
    });
    assert.equal(pager.rows, 1, 'Previous page, the page number and Next page side by side');
    assert.ok(
      button.height < 2 * button.line + 16,
      `each pager button holds its words on one line (${button.height} px high)`,
    );
  });
});

describe('focus handed on', { skip: skipWithoutChromium() }, () => {
  before(() => ensurePortalBuilt({ quiet: true }));
  after(closeTestDatabases);

  it('from Clear selection to select-all, and from a refused Reassign to its error', {
    timeout: 180_000,
  }, async (t) => {
    const base = await startPortal(t, { RATE_LIMIT_BULK: '1/1m' });
    const page = await openBrowser(t);
    await page.goto(`${base}/`);
    await submitLogin(page, ALICE, DEMO_PASSWORD);
    await page.locator('#bulk-budget', { hasText: '1 of 1 bulk reassignment left' }).waitFor();
    const box = (id: number) => page.getByRole('checkbox', { name: new RegExp(`^Select task ${id}:`) });

    await box(4).check();
    await page.getByRole('button', { name: 'Clear selection' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#selection-status', { hasText: '0 of at most 50 selected.' }).waitFor();
    assert.equal(
      await focused(page),
      'checkbox "Select all on this page (at most 50)"',
      'the removed button handed on',
    );

    // Alice spends the budget in another session: the page still offers Reassign, and is refused.
    const elsewhere = new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() });
    await elsewhere.login(ALICE, DEMO_PASSWORD);
    await elsewhere.bulkReassign([7], 2);
    await box(4).check();
    await page.getByLabel('New assignee').selectOption({ label: 'Bob Nguyen' });
    await page.getByRole('button', { name: 'Reassign 1 task' }).focus();
    await page.keyboard.press('Enter');
    await page
      .locator('#bulk-error', { hasText: 'You have used all your bulk reassignments for now.' })
      .waitFor();
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'bulk-error',
      'the refusal takes focus from the outcome region the disabled button handed it to',
    );
  });

  it('on the Admin page: Refresh keeps focus while it loads, Unlock hands it to what it did', {
    timeout: 180_000,
  }, async (t) => {
    const base = await startPortal(t, { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' });
    for (let attempt = 0; attempt < 3; attempt++)
      await new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() })
        .login('carol@example.com', 'not-the-password')
        .catch(() => {});
    const page = await openBrowser(t);
    await page.goto(`${base}/#admin`);
    await submitLogin(page, ADMIN, DEMO_PASSWORD);
    await page.locator('#login-locks tr', { hasText: 'carol@example.com' }).waitFor();

    await page.getByRole('button', { name: 'Refresh locks' }).focus();
    await page.keyboard.press('Enter');
    assert.equal(await focused(page), 'button "Refresh locks"', 'while the locks load');
    await page.locator('#login-locks[aria-busy="false"]').waitFor();
    assert.equal(await focused(page), 'button "Refresh locks"', 'after the locks loaded');

    await page.getByRole('button', { name: 'Unlock carol@example.com' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#unlock-status', { hasText: 'carol@example.com is unlocked' }).waitFor();
    await page.locator('#login-locks tr', { hasText: 'carol@example.com' }).waitFor({ state: 'detached' });
    assert.equal(await focused(page), 'status "carol@example.com is unlocked and can sign in again."');
  });
});
