// The portal in a real browser (Debian's Chromium via playwright-core): sign in, reassign, the limits.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import type { Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { ApiClient, MemoryCookieJar } from '../../src/client/index.ts';
import { ManualClock } from '../../src/clock.ts';
import { portalPlugin } from '../../src/http/plugins/portal.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD, testConfig } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases, testDatabase } from '../helpers/database.ts';

const ALICE = 'alice@example.com';
const BOB = { id: 2, name: 'Bob Nguyen' };
const REPO = fileURLToPath(new URL('../../', import.meta.url));

async function signIn(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/`);
  await submitLogin(page, ALICE, DEMO_PASSWORD);
  await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
}

/** Waits until the element holds text matching `text`. */
const waitForText = (page: Page, selector: string, text: string | RegExp, timeout = 5000) =>
  page.locator(selector, { hasText: text }).waitFor({ timeout });

const taskCheckbox = (page: Page, id: number) =>
  page.getByRole('checkbox', { name: new RegExp(`^Select task ${id}:`) });

const assigneeOf = (page: Page, id: number) =>
  page.locator(`tr[data-task-id="${id}"] td.assignee`).textContent();

const clientOf = (page: Page, id: number) => page.locator(`tr[data-task-id="${id}"] td.client`).textContent();

describe('the portal', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('signs in, reassigns three tasks, and shows the new assignees after a reload', {
    timeout: 60_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await signIn(page, base);
    await waitForText(page, '#bulk-budget', '30 of 30 bulk reassignments left in this 15-minute window.');

    // Tasks 2, 3 and 5 start with Carol, Alice and Carol.
    for (const id of [2, 3, 5]) await taskCheckbox(page, id).check();
    await waitForText(page, '#selection-status', '3 of at most 50 selected.');
    await page.getByLabel('New assignee').selectOption({ label: BOB.name });
    await page.getByRole('button', { name: 'Reassign 3 tasks' }).click();
    await waitForText(page, '#bulk-outcome', `3 succeeded, 0 failed. Reassigned to ${BOB.name}.`);
    await waitForText(page, '#bulk-budget', '29 of 30 bulk reassignments left in this 15-minute window.');

    await mkdir(join(REPO, 'test-results'), { recursive: true });
    await page.screenshot({ path: join(REPO, 'test-results', 'tasks-page.png'), fullPage: true });
    // The picture of docs/portal.md, the top of the page: written when missing, or when UPDATE_SCREENSHOTS=1.
    const docsShot = join(REPO, 'docs', 'tasks-page.png');
    if (!existsSync(docsShot) || process.env.UPDATE_SCREENSHOTS === '1') {
      await mkdir(join(REPO, 'docs'), { recursive: true });
      await page.screenshot({
        path: docsShot,
        fullPage: true,
        clip: { x: 0, y: 0, width: 1024, height: 700 },
      });
    }

    await page.reload();
    await page.locator('tr[data-task-id="5"]').waitFor();
    for (const id of [2, 3, 5]) assert.equal(await assigneeOf(page, id), BOB.name, `task ${id}`);
    assert.equal(await assigneeOf(page, 6), 'Alice Martin', 'an unselected task keeps its assignee');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await waitForText(page, 'main', 'You have signed out.');
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  it('disables Reassign with a countdown on a 429, and enables it again when the wait is over', {
    timeout: 60_000,
  }, async (t) => {
    // The server's clock stands still and the browser's flows from the same time; both are moved
    // by the three seconds of the window together below, instead of waiting them out.
    const clock = new ManualClock(Date.now());
    const base = await startPortal(t, { RATE_LIMIT_BULK: '2/3s' }, clock);
    const page = await openBrowser(t);
    await page.clock.install({ time: clock.now() });
    await signIn(page, base);
    await waitForText(page, '#bulk-budget', '2 of 2 bulk reassignments left in this 3-second window.');
    await taskCheckbox(page, 10).check();
    await page.getByLabel('New assignee').selectOption({ label: BOB.name });
    await page.getByRole('button', { name: 'Reassign 1 task' }).click();
    await waitForText(page, '#bulk-budget', '1 of 2 bulk reassignments left');

    // Alice spends the last one in another session (the budget is per user): the page does not know.
    const elsewhere = new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() });
    await elsewhere.login(ALICE, DEMO_PASSWORD);
    await elsewhere.bulkReassign([11], BOB.id);

    await taskCheckbox(page, 12).check();
    await page.getByRole('button', { name: 'Reassign 1 task' }).click();
    await waitForText(page, '#bulk-countdown', /you can reassign again in [123] seconds?\./);
    await waitForText(page, '#bulk-error', 'You have used all your bulk reassignments for now.');
    await waitForText(page, '#bulk-budget', '0 of 2 bulk reassignments left');
    assert.equal(await page.locator('#reassign').isDisabled(), true);

    // Three seconds on: the window's first admission has left on the server, the countdown has
    // run out in the browser, and the button comes back by itself.
    clock.advance(3_000);
    await page.clock.runFor(3_000);
    await page.locator('#reassign:enabled').waitFor();
    assert.equal(await page.locator('#bulk-countdown').count(), 0);
    await waitForText(page, '#bulk-outcome', 'You can reassign again.');
    await page.getByRole('button', { name: 'Reassign 1 task' }).click();
    await waitForText(page, '#bulk-outcome', '1 succeeded, 0 failed.');
    // The outcome shows before the table's reload lands: wait for the row to say so.
    await page.locator('tr[data-task-id="12"] td.assignee', { hasText: BOB.name }).waitFor();
    assert.equal(await assigneeOf(page, 12), BOB.name);
  });

  it('says one generic thing for wrong passwords and unknown emails, how long a locked account waits, and keeps the login path open', {
    timeout: 60_000,
  }, async (t) => {
    // The first page load spends the whole unauthenticated budget (GET /api/auth/me answers 401).
    const base = await startPortal(t, {
      RATE_LIMIT_LOGIN_ACCOUNT: '2/1m',
      RATE_LIMIT_UNAUTHENTICATED: '1/1m',
    });
    const page = await openBrowser(t);
    await page.goto(`${base}/`);
    await submitLogin(page, 'nobody@example.com', DEMO_PASSWORD);
    await waitForText(page, '#login-error', 'The email or password is not correct.');
    const unknown = await page.locator('#login-error').textContent();
    for (let attempt = 0; attempt < 2; attempt++) {
      await submitLogin(page, ALICE, 'not-the-password');
      await waitForText(page, '#login-error', 'The email or password is not correct.');
    }
    assert.equal(await page.locator('#login-error').textContent(), unknown);

    await submitLogin(page, ALICE, DEMO_PASSWORD);
    await waitForText(page, '#login-error', 'Too many failed sign-in attempts');
    await waitForText(page, '#login-error', /This account can try again in (1 minute|[0-9]+ seconds)\./);
    const signInButton = page.getByRole('button', { name: 'Sign in', exact: true });
    assert.equal(await signInButton.isDisabled(), true);
    // The lock is on Alice's account only: another account may still sign in from here.
    await page.getByLabel('Email').fill('bob@example.com');
    assert.equal(await signInButton.isDisabled(), false);

    // A reload is refused by the spent unauthenticated budget; the login path stays open all the same.
    await page.reload();
    await submitLogin(page, 'bob@example.com', DEMO_PASSWORD);
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
  });

  it('says so when the per-user API budget runs out, and keeps the page usable', {
    timeout: 60_000,
  }, async (t) => {
    // Signing in spends nothing of it; the Tasks page spends three (employees, clients, tasks), each page one more.
    const base = await startPortal(t, { RATE_LIMIT_AUTHENTICATED: '4/1m' });
    const page = await openBrowser(t);
    await signIn(page, base);
    await page.locator('tr[data-task-id="1"]').waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.locator('tr[data-task-id="51"]').waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await waitForText(page, '[role="alert"]', 'too many requests in a short time');
    await waitForText(page, '[role="timer"]', /The tasks will load again in (1 minute|[0-9]+ seconds)\./);
    assert.equal(await page.locator('tr[data-task-id="51"]').count(), 1, 'the page shown stays');
    assert.equal(await page.getByRole('heading', { name: 'Tasks', level: 1 }).count(), 1);
  });

  it("names each task's client, and filters by the client picker from the keyboard at 375 px", {
    timeout: 60_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t, { width: 375, height: 800 });
    await signIn(page, base);
    await page.locator('tr[data-task-id="3"] td.client', { hasText: 'Initech' }).waitFor();
    // The seed gives tasks 1, 2, 3 to Northwind Traders, Globex Corporation and Initech, in turn.
    for (const [id, name] of [
      [1, 'Northwind Traders'],
      [2, 'Globex Corporation'],
      [3, 'Initech'],
    ] as const)
      assert.equal(await clientOf(page, id), name, `task ${id}`);

    const picker = page.getByLabel('Client', { exact: true });
    assert.deepEqual(await picker.locator('option').allTextContents(), [
      'Any client',
      'Globex Corporation',
      'Initech',
      'Northwind Traders',
    ]);
    // From the keyboard: focus the picker, type the start of a name, tab on to the button.
    await picker.focus();
    await page.keyboard.type('Ini');
    assert.equal(
      await picker.evaluate((select: HTMLSelectElement) => select.selectedOptions[0]?.text),
      'Initech',
    );
    // Assignee, status, sort and page size come between them: five presses.
    for (let presses = 0; presses < 5; presses++) await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(() => document.activeElement?.textContent),
      'Apply filters',
      'Tab reaches the button after the other filters',
    );
    await page.keyboard.press('Enter');
    await page.locator('tr[data-task-id="1"]').waitFor({ state: 'detached' });
    const ids = (
      await page
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-task-id')))
    ).map(Number);
    assert.deepEqual(
      ids,
      Array.from({ length: 50 }, (_, i) => 3 * i + 3),
      "Initech's first 50 tasks",
    );
    assert.deepEqual([...new Set(await page.locator('td.client').allTextContents())], ['Initech']);

    await picker.selectOption({ label: 'Any client' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('tr[data-task-id="1"]').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scrolling at 375 px (overflow ${overflow} px)`);
  });

  it('works at 375 px by keyboard, and select-all stops at 50 and says so', {
    timeout: 60_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t, { width: 375, height: 800 });
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The page moves focus to its heading once it has rendered (an effect, after the heading is
    // shown): keys pressed before that would start from the top of the document instead.
    await page.waitForFunction(() => document.activeElement?.id === 'login-title');
    await page.keyboard.press('Tab');
    await page.keyboard.type(ALICE);
    await page.keyboard.press('Tab');
    await page.keyboard.type(DEMO_PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();

    await page.getByLabel('Per page').selectOption('100');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('tr[data-task-id="100"]').waitFor();
    await page.getByLabel('Select all on this page (at most 50)').check();
    await waitForText(page, '#selection-status', '50 of at most 50 selected.');
    await waitForText(page, '#selection-status', 'only 50 are selected, not all 100 on this page');
    assert.equal(await page.locator('tr.selected').count(), 50);
    assert.equal(await page.getByRole('button', { name: 'Reassign' }).isDisabled(), true, 'no assignee yet');

    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scrolling at 375 px (overflow ${overflow} px)`);
  });
});

describe('serving the portal', () => {
  before(() => ensurePortalBuilt({ quiet: true }));
  after(closeTestDatabases);

  it('serves the page at / under the CSP, and hashed assets precompressed and cached for good', async (t) => {
    const database = await testDatabase('embedded');
    const app = await buildApp(testConfig(), { database: database.db });
    t.after(() => app.close());
    const page = await app.inject({ url: '/' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
    const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"/.exec(page.body)?.[1];
    assert.ok(script, 'the page loads its script from a file, not inline');
    assert.doesNotMatch(page.body, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');

    const asset = await app.inject({ url: script, headers: { 'accept-encoding': 'br, gzip' } });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.headers['content-encoding'], 'br');
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
  });

  it('leaves unknown /api paths to the API: a JSON 404 that spends the generic budget', async (t) => {
    const database = await testDatabase('embedded');
    const app = await buildApp(testConfig(), { database: database.db });
    t.after(() => app.close());
    const response = await app.inject({ url: '/api/index.html' });
    assert.equal(response.statusCode, 404);
    assert.equal(response.json().code, 'NOT_FOUND');
    assert.equal(response.headers['ratelimit-policy'], '"api-unauthenticated";q=100;w=900');
  });

  it('answers 503 at / with what to run when the portal is not built', async (t) => {
    const app = Fastify();
    t.after(() => app.close());
    await app.register(portalPlugin, { root: join(tmpdir(), 'no-such-portal-build') });
    const response = await app.inject({ url: '/' });
    assert.equal(response.statusCode, 503);
    assert.match(response.body, /npm run build/);
  });
});
