// The Tasks page's search in its address, and CSV export and import (docs/rules.md#export-and-import), in
// Chromium.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { ApiClient, MemoryCookieJar, type TaskFilters } from '../../src/client/index.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import {
  CHROMIUM,
  openBrowser as openChromium,
  skipWithoutChromium,
  startPortal,
  submitLogin,
} from '../helpers/browser.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { focused } from '../helpers/focus.ts';

/** A browser whose waits allow for a machine shared with other test runs (the helpers' 10 s doubled). */
async function openBrowser(t: TestContext): Promise<Page> {
  const page = await openChromium(t);
  page.setDefaultTimeout(20_000);
  return page;
}

async function signIn(page: Page, url: string, email = 'alice@example.com'): Promise<void> {
  await page.goto(url);
  await submitLogin(page, email, DEMO_PASSWORD);
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
  await page.locator('#results-status:not(:empty)').waitFor();
}

async function apiAs(base: string, email = 'alice@example.com'): Promise<ApiClient> {
  const api = new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() });
  await api.login(email, DEMO_PASSWORD);
  return api;
}

/** Every task id the list finds for `filters`, page after page, in its order. */
async function allIds(api: ApiClient, filters: TaskFilters): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.tasks({ ...filters, limit: 200, cursor });
    ids.push(...page.tasks.map((task) => task.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return ids;
}

/** The ids of the rows the table shows, once it has settled. */
async function shownIds(page: Page): Promise<number[]> {
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
  return page
    .locator('tr[data-task-id]')
    .evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-task-id'))));
}

const importAnswer = (page: Page) =>
  page.waitForResponse(
    (response) =>
      response.request().method() === 'POST' &&
      new URL(response.url()).pathname === '/api/employee/tasks/import',
  );

async function importFile(page: Page, name: string, text: string) {
  await page.getByLabel('CSV file to import').setInputFiles({
    name,
    mimeType: 'text/csv',
    buffer: Buffer.from(text),
  });
  const answer = importAnswer(page);
  await page.getByRole('button', { name: 'Import CSV' }).click();
  return answer;
}

describe('the Tasks page: search in the address, CSV export and import', {
  skip: skipWithoutChromium(),
}, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('keeps a search, its filters and sort in the address: a reload shows the same results and controls', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await signIn(page, `${base}/#tasks`);
    const filters = page.getByRole('form', { name: 'Filter tasks' });
    await filters.getByLabel('Search').fill('invoice');
    await filters.getByLabel('Client').selectOption({ label: 'Initech' });
    await filters.getByLabel('Sort').selectOption({ label: 'Latest change first' });
    await filters.getByLabel('Per page').selectOption('25');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('tr[data-task-id="1"]').waitFor({ state: 'detached' });
    const found = await shownIds(page);
    const api = await apiAs(base);
    const expected = await allIds(api, { q: 'invoice', clientId: 3, sort: '-updatedAt' });
    assert.ok(expected.length > 0, 'the search finds something');
    assert.deepEqual(found, expected.slice(0, 25));

    const url = new URL(page.url());
    assert.equal(url.search, '?q=invoice&clientId=3&sort=-updatedAt&limit=25');
    assert.equal(url.hash, '#tasks');

    await page.reload();
    await page.locator('#results-status:not(:empty)').waitFor();
    assert.deepEqual(await shownIds(page), found, 'the same results after a reload');
    assert.equal(await filters.getByLabel('Search').inputValue(), 'invoice');
    assert.equal(await filters.getByLabel('Client').inputValue(), '3');
    assert.equal(await filters.getByLabel('Sort').inputValue(), '-updatedAt');
    assert.equal(await filters.getByLabel('Per page').inputValue(), '25');
    assert.equal(await filters.getByLabel('Status').inputValue(), '');

    // Opened from a shared link with values the list would refuse: those are left out, the rest hold.
    await page.goto(
      `${base}/?q=%21%21&clientId=abc&status=bogus&sort=drop&limit=7&assigneeId=2&cursor=x#tasks`,
    );
    await page.locator('#results-status', { hasText: '50 tasks on page 1.' }).waitFor();
    assert.deepEqual(await shownIds(page), (await allIds(api, { assigneeId: 2 })).slice(0, 50));
    assert.equal(await filters.getByLabel('Search').inputValue(), '');
    assert.equal(await filters.getByLabel('Assignee').inputValue(), '2');
    assert.equal(await filters.getByLabel('Sort').inputValue(), 'id');
    assert.equal(new URL(page.url()).search, '?assigneeId=2', 'the address says what is applied');
    assert.equal(await page.locator('.banner.error').count(), 0);

    // A search without a word is refused beside the box, which keeps focus.
    await filters.getByLabel('Search').fill('!!');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('#filter-q-problem').waitFor();
    assert.equal(await focused(page), 'textbox "Search"');
    assert.equal(await filters.getByLabel('Search').getAttribute('aria-describedby'), 'filter-q-problem');
  });

  it('says why a file is refused (an unknown column, too large), lists each wrong row by line and column creating nothing, creates the fixed file’s tasks, then says the budget is spent', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t, { RATE_LIMIT_TASK_IMPORT: '3/1h' });
    const page = await openBrowser(t);
    await signIn(page, `${base}/?q=quokka#tasks`);
    await page.locator('#results-status', { hasText: '0 tasks on page 1.' }).waitFor();
    const problems = page.locator('#import-problems');

    // Not a task list: an unknown column, said with the server's reason.
    assert.equal(
      (await importFile(page, 'colours.csv', 'client,title,colour\r\nInitech,A,red')).status(),
      400,
    );
    await problems
      .getByText('The file was not imported: it has a column "colour"; the columns are', { exact: false })
      .waitFor();
    // Too large (answered here by the test, so that no 20 MiB has to be sent): said in words.
    await page.route('**/api/employee/tasks/import', (route) =>
      route.fulfill({
        status: 413,
        contentType: 'application/json',
        body: JSON.stringify({ code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.' }),
      }),
    );
    assert.equal((await importFile(page, 'huge.csv', 'client,title\r\nInitech,A')).status(), 413);
    await problems.getByText('The file is too large to import at once.', { exact: false }).waitFor();
    await page.unroute('**/api/employee/tasks/import');

    const wrong = [
      'client,title,priority,assignee',
      'Initech,Quokka one,high,bob@example.com',
      'Nowhere Inc,Quokka two,normal,',
      'Initech,,low,',
      'globex corporation,Quokka four,extreme,nobody@example.com',
    ].join('\r\n');
    const refused = await importFile(page, 'quokkas.csv', wrong);
    assert.equal(refused.status(), 422);
    const headers = refused.request().headers();
    assert.ok(headers['x-csrf-token'], 'the import carries the CSRF token');
    assert.ok(headers['idempotency-key'], 'the import carries an Idempotency-Key');
    assert.match(headers['content-type'] ?? '', /^text\/csv/);
    const { errors } = (await refused.json()) as {
      errors: { line: number; column: string; message: string }[];
    };
    assert.deepEqual(
      errors.map((error) => `${error.line} ${error.column}`),
      ['3 client', '4 title', '5 priority', '5 assignee'],
    );
    const rows = page.locator('#import-rows li');
    await rows.first().waitFor();
    assert.deepEqual(
      await rows.allTextContents(),
      errors.map((error) => `Line ${error.line}, column ${error.column}: ${error.message}`),
    );
    assert.match(
      (await page.locator('#import-problems').textContent()) ?? '',
      /^Nothing was imported: quokkas\.csv has wrong cells\./,
    );
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'import-problems');
    const file = page.getByLabel('CSV file to import');
    assert.equal(await file.getAttribute('aria-invalid'), 'true');
    assert.match((await file.getAttribute('aria-describedby')) ?? '', /\bimport-problems\b/);
    const api = await apiAs(base);
    assert.deepEqual(await allIds(api, { q: 'quokka' }), [], 'nothing created');

    const fixed = [
      'client,title,priority,assignee',
      'Initech,Quokka one,high,bob@example.com',
      'Initech,Quokka two,normal,',
      'Initech,Quokka three,low,',
      'globex corporation,Quokka four,urgent,carol@example.com',
    ].join('\r\n');
    const created = await importFile(page, 'quokkas-fixed.csv', fixed);
    assert.equal(created.status(), 201);
    await page.locator('#import-status', { hasText: '4 tasks created from quokkas-fixed.csv.' }).waitFor();
    assert.equal(await page.locator('#import-problems').textContent(), '');
    assert.equal(await file.getAttribute('aria-invalid'), null);
    // The list reloads: the search for them now finds the four.
    await page.locator('#results-status', { hasText: '4 tasks on page 1.' }).waitFor();
    const ids = await allIds(api, { q: 'quokka' });
    assert.equal(ids.length, 4);
    assert.deepEqual(await shownIds(page), ids);
    assert.deepEqual(await page.locator('tr[data-task-id] td.assignee').allTextContents(), [
      'Bob Nguyen',
      'Unassigned',
      'Unassigned',
      'Carol Schmidt',
    ]);

    // The fourth import this hour: refused by the budget, said in words with the wait.
    const limited = await importFile(page, 'quokkas-fixed.csv', fixed);
    assert.equal(limited.status(), 429);
    await page
      .locator('#import-problems', {
        hasText: /^You have used all your imports for now\. You can import again in \d/,
      })
      .waitFor();
    assert.equal((await allIds(api, { q: 'quokka' })).length, 4);
  });

  it('shows the upload of a large file in a named progress bar, then the tasks it created', {
    timeout: 120_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await signIn(page, `${base}/#tasks`);
    const description = 'x'.repeat(9_000);
    const lines = ['client,title,description'];
    for (let row = 1; row <= 400; row++) lines.push(`Initech,Large import ${row},${description}`);
    const text = lines.join('\r\n');
    assert.ok(text.length > 3_000_000, 'a few MB');

    // Every value the bar shows, recorded as it changes; the upload slowed to 1.5 MB/s, so that it
    // takes a few seconds whatever the machine and the bar has values to show between 0 and full.
    await page.evaluate(() => {
      const seen: [number, number][] = [];
      (window as unknown as { progressSeen: typeof seen }).progressSeen = seen;
      new MutationObserver(() => {
        const bar = document.getElementById('import-progress') as HTMLProgressElement | null;
        const last = seen[seen.length - 1];
        if (bar && (!last || last[0] !== bar.value || last[1] !== bar.max)) seen.push([bar.value, bar.max]);
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 1_500_000,
    });
    const answer = importFile(page, 'large.csv', text);
    await page.getByRole('progressbar', { name: 'Sending large.csv' }).waitFor();
    assert.equal((await answer).status(), 201);
    await page.locator('#import-status', { hasText: '400 tasks created from large.csv.' }).waitFor();
    assert.equal(await page.locator('#import-progress').count(), 0, 'the bar goes when the import is done');
    const seen = await page.evaluate(
      () => (window as unknown as { progressSeen: [number, number][] }).progressSeen,
    );
    const bytes = Buffer.byteLength(text);
    assert.ok(
      seen.some(([value, max]) => value > 0 && value < max && max >= bytes),
      `the bar showed part of the upload: ${JSON.stringify(seen.slice(0, 5))}…`,
    );
    assert.deepEqual(
      seen.map(([value]) => value),
      seen.map(([value]) => value).sort((a, b) => a - b),
      'it only moves forward',
    );
  });

  it('exports every page of the applied filter and sort as one CSV file', { timeout: 90_000 }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await signIn(page, `${base}/#tasks`);
    const filters = page.getByRole('form', { name: 'Filter tasks' });
    await filters.getByLabel('Client').selectOption({ label: 'Initech' });
    await filters.getByLabel('Sort').selectOption({ label: 'Latest change first' });
    await filters.getByLabel('Per page').selectOption('25');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('tr[data-task-id="1"]').waitFor({ state: 'detached' });
    assert.equal((await shownIds(page)).length, 25);
    const expected = await allIds(await apiAs(base), { clientId: 3, sort: '-updatedAt' });
    assert.ok(expected.length > 50, `more tasks than two pages (${expected.length})`);

    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Export CSV' }).click();
    const file = await download;
    assert.match(file.suggestedFilename(), /^tasks-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = await readFile((await file.path())!, 'utf8');
    const [header, ...rows] = csv.split('\r\n').filter((line) => line !== '');
    assert.equal(header, 'id,client,title,description,status,priority,dueDate,assignee');
    assert.deepEqual(
      rows.map((row) => Number(row.split(',')[0])),
      expected,
      'every matching task, in the list’s order',
    );
    assert.ok(rows.every((row) => row.split(',')[1] === 'Initech'));
  });
});
