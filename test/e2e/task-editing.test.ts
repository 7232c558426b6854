// Tasks in Chromium: create one from the form, edit it, meet another person's change (412) and keep both, its
// history; clients.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { ApiClient, MemoryCookieJar } from '../../src/client/index.ts';
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
async function openBrowser(t: TestContext, viewport?: { width: number; height: number }): Promise<Page> {
  const page = await openChromium(t, viewport);
  page.setDefaultTimeout(20_000);
  return page;
}

async function signIn(page: Page, base: string, email: string, hash = '#tasks'): Promise<void> {
  await page.goto(`${base}/${hash}`);
  await submitLogin(page, email, DEMO_PASSWORD);
}

async function apiAs(base: string, email: string): Promise<ApiClient> {
  const api = new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() });
  await api.login(email, DEMO_PASSWORD);
  return api;
}

const noSidewaysScroll = async (page: Page) => {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling (overflow ${overflow} px)`);
};

describe('creating and editing tasks', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('creates a task from the form, refused fields said beside them, and lists priority and an overdue due date (375 px)', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t, { width: 375, height: 800 });
    await signIn(page, base, 'bob@example.com');
    await page.locator('tr[data-task-id="1"]').waitFor();
    await page.getByRole('button', { name: 'New task' }).click();
    assert.equal(await focused(page), 'heading "New task"');
    const form = page.locator('form.task-form');
    await form.getByLabel('Client').selectOption({ label: 'Initech' });
    await form.getByLabel('Title').fill('Call the <b>printer</b> people');
    await form.getByLabel('Description').fill('Line one\n<script>alert(1)</script>');
    await form.getByLabel('Assignee').selectOption({ label: 'Carol Schmidt' });
    await form.getByLabel('Priority').selectOption({ label: 'Urgent' });
    // A due date in the past: the list marks it overdue in words.
    await form.getByLabel('Due date').fill('2020-01-15');
    const created = page.waitForResponse(
      (response) =>
        response.request().method() === 'POST' && new URL(response.url()).pathname === '/api/employee/tasks',
    );
    await form.getByRole('button', { name: 'Create task' }).click();
    const answer = await created;
    assert.equal(answer.status(), 201);
    assert.ok(answer.request().headers()['idempotency-key'], 'the create carries an Idempotency-Key');
    const id = ((await answer.json()) as { task: { id: number } }).task.id;

    // The new task's own view, its address naming it.
    await page
      .getByRole('heading', { level: 1, name: `Task ${id}: Call the <b>printer</b> people` })
      .waitFor();
    assert.equal(new URL(page.url()).hash, `#task/${id}`);
    assert.equal(await page.title(), `Task ${id} — Task portal`);
    assert.equal(await page.locator('h1').count(), 1);
    assert.equal(await page.getByLabel('Description').inputValue(), 'Line one\n<script>alert(1)</script>');
    assert.equal(await page.locator('b, script:not([src])').count(), 0, 'text is never HTML');
    await page.locator('#task-history li[data-history-source="create"]').waitFor();
    await noSidewaysScroll(page);

    // Back in the list, filtered down to it: priority and the overdue mark, in words.
    await page.getByRole('link', { name: 'Back to the task list' }).click();
    const filters = page.getByRole('form', { name: 'Filter tasks' });
    await filters.getByLabel('Status').selectOption({ label: 'Open' });
    await filters.getByLabel('Client').selectOption({ label: 'Initech' });
    await filters.getByLabel('Assignee').selectOption({ label: 'Carol Schmidt' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const row = page.locator(`tr[data-task-id="${id}"]`);
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Urgent.*2020-01-15\s*Overdue/);
    await noSidewaysScroll(page);

    // A refused field: said beside it, marked invalid, given focus.
    await page.getByRole('button', { name: 'New task' }).click();
    await form.getByLabel('Client').selectOption({ label: 'Initech' });
    await form.getByLabel('Title').fill('Bad control\u0007character');
    await form.getByRole('button', { name: 'Create task' }).click();
    await page.locator('#new-task-field-title-problem').waitFor();
    assert.equal(await form.getByLabel('Title').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'new-task-field-title');
    // Cancel closes the form and gives focus back to the button that opened it.
    await form.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await form.count(), 0);
    assert.equal(await focused(page), 'button "New task"');
  });

  it('sends a create whose connection broke again under the same Idempotency-Key, and makes one task', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await signIn(page, base, 'alice@example.com');
    await page.locator('tr[data-task-id="1"]').waitFor();
    const keys: string[] = [];
    // The first try reaches the server, which makes the task, but its answer is lost (a connection
    // reset); the client sends it again by itself, under the same key.
    await page.route('**/api/employee/tasks', async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      keys.push(route.request().headers()['idempotency-key'] ?? '');
      if (keys.length > 1) return route.fallback();
      await route.fetch();
      return route.abort('connectionreset');
    });
    await page.getByRole('button', { name: 'New task' }).click();
    const form = page.locator('form.task-form');
    await form.getByLabel('Client').selectOption({ label: 'Globex Corporation' });
    await form.getByLabel('Title').fill('Sent twice, made once');
    await form.getByRole('button', { name: 'Create task' }).click();
    const heading = page.getByRole('heading', { level: 1, name: /^Task \d+: Sent twice, made once$/ });
    await heading.waitFor();
    assert.equal(keys.length, 2);
    assert.ok(keys[0], 'a key on the first try');
    assert.equal(keys[1], keys[0], 'the same key on the retry');
    // One task: the one shown, and none after it.
    const id = Number(/^Task (\d+):/.exec((await heading.textContent()) ?? '')?.[1]);
    const alice = await apiAs(base, 'alice@example.com');
    assert.equal((await alice.getTask(id)).task.title, 'Sent twice, made once');
    await assert.rejects(alice.getTask(id + 1), { code: 'NOT_FOUND' });
    assert.notEqual((await alice.getTask(id - 1)).task.title, 'Sent twice, made once');
  });

  it('edits a task, meets another person’s change, keeps what was typed and applies it over theirs; both survive', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    await signIn(page, base, 'bob@example.com');
    await page.locator('tr[data-task-id="3"] a').click();
    await page.getByRole('heading', { level: 1, name: /^Task 3: / }).waitFor();
    assert.equal(new URL(page.url()).hash, '#task/3');
    await page.getByLabel('Title').waitFor();

    // A plain edit: focus goes to what happened.
    await page.getByLabel('Description').fill('First words');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('#task-outcome', { hasText: 'Saved.' }).waitFor();
    assert.match(await focused(page), /^status "Saved\. Description from no description to “First words”\."/);

    // Alice changes the priority meanwhile, through the API.
    const alice = await apiAs(base, 'alice@example.com');
    const { etag } = await alice.getTask(3);
    await alice.editTask(3, { priority: 'urgent' }, etag);

    // Bob, still on version 2, changes the status and the description and saves.
    await page.getByLabel(/^Status/).selectOption({ label: 'In progress' });
    await page.getByLabel(/^Description/).fill('Bob’s words, kept');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const conflict = page.locator('#task-conflict');
    await conflict.waitFor();
    assert.match(
      (await conflict.textContent()) ?? '',
      /Alice Martin \(edited, .*\): Priority from Normal to Urgent\./,
    );
    assert.equal(await focused(page), 'heading "Someone else changed this task while you were editing it"');
    assert.equal(await page.getByLabel(/^Description/).inputValue(), 'Bob’s words, kept');
    assert.equal(await page.getByLabel(/^Status/).inputValue(), 'in_progress');
    assert.equal(await page.getByLabel(/^Priority/).inputValue(), 'urgent', 'their change shown');
    assert.equal((await alice.getTask(3)).task.status, 'open', 'nothing of Bob’s saved yet');

    const patch = page.waitForRequest((request) => request.method() === 'PATCH');
    await page.getByRole('button', { name: 'Apply my changes over theirs' }).click();
    const sent = await patch;
    assert.deepEqual(JSON.parse(sent.postData() ?? '{}'), {
      description: 'Bob’s words, kept',
      status: 'in_progress',
    });
    assert.equal(sent.headers()['if-match'], '"v3"');
    await page.locator('#task-outcome', { hasText: 'Saved.' }).waitFor();
    assert.equal(await conflict.count(), 0);
    const now = (await alice.getTask(3)).task;
    assert.equal(now.priority, 'urgent', 'Alice’s change kept');
    assert.equal(now.status, 'in_progress', 'Bob’s change kept');
    assert.equal(now.description, 'Bob’s words, kept');

    // The history, newest first: Bob's second edit, Alice's, Bob's first.
    const entries = page.locator('#task-history > li');
    await page.waitForFunction(
      () => document.querySelectorAll('#task-history > li[data-history-source="edit"]').length === 3,
    );
    assert.match(
      (await entries.nth(0).textContent()) ?? '',
      /Bob Nguyen edited it.*Status from Open to In progress/,
    );
    assert.match(
      (await entries.nth(1).textContent()) ?? '',
      /Alice Martin edited it.*Priority from Normal to Urgent/,
    );
    assert.match(
      (await entries.nth(2).textContent()) ?? '',
      /Bob Nguyen edited it.*Description from no description to “First words”/,
    );

    // Fifty more edits: the history shows the newest 50, and Load more brings the rest.
    let tag = (await alice.getTask(3)).etag;
    for (let n = 1; n <= 50; n++) tag = (await alice.editTask(3, { title: `Title ${n}` }, tag)).etag;
    await page.reload();
    await page.locator('#task-history > li').first().waitFor();
    assert.equal(await entries.count(), 50);
    assert.match((await entries.nth(0).textContent()) ?? '', /Title from “Title 49” to “Title 50”/);
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.waitForFunction(() => document.querySelectorAll('#task-history > li').length > 50);
    assert.equal(await entries.count(), 53, 'the 50 titles and the 3 edits before them');
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0, 'no more');
  });

  it('lets an admin add a client and rename it; a name taken is refused beside its field', {
    timeout: 90_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t, { width: 375, height: 800 });
    await signIn(page, base, 'admin@example.com');
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    await page
      .getByRole('navigation', { name: 'Portal pages' })
      .getByRole('link', { name: 'Clients' })
      .click();
    await page.getByRole('heading', { name: 'Clients', level: 1 }).waitFor();
    assert.equal(await page.title(), 'Clients — Task portal');
    await page.locator('#clients tr', { hasText: 'Initech' }).waitFor();

    await page.getByLabel('Client name').fill('Umbrella Corporation');
    await page.getByRole('button', { name: 'Add client' }).click();
    await page.locator('#clients-outcome', { hasText: 'Umbrella Corporation is added.' }).waitFor();
    await page.locator('#clients tr', { hasText: 'Umbrella Corporation' }).waitFor();

    await page.getByLabel('Client name').fill('initech');
    await page.getByRole('button', { name: 'Add client' }).click();
    await page.locator('#add-client-problem', { hasText: 'already exists' }).waitFor();
    assert.equal(await page.getByLabel('Client name').getAttribute('aria-invalid'), 'true');

    // Escape cancels a rename and gives focus back to its button.
    await page.getByRole('button', { name: 'Rename Initech' }).click();
    await page.getByLabel('New name for Initech').press('Escape');
    assert.equal(await focused(page), 'button "Rename Initech"');
    await page.getByRole('button', { name: 'Rename Umbrella Corporation' }).click();
    const rename = page.getByLabel('New name for Umbrella Corporation');
    assert.equal(await page.evaluate(() => document.activeElement?.id), await rename.getAttribute('id'));
    await rename.fill('Umbrella Health');
    await rename.press('Enter');
    await page
      .locator('#clients-outcome', { hasText: 'Umbrella Corporation is now Umbrella Health.' })
      .waitFor();
    assert.match(await focused(page), /^status "Umbrella Corporation is now Umbrella Health\."/);
    const admin = await apiAs(base, 'admin@example.com');
    assert.ok((await admin.clients()).some((item) => item.name === 'Umbrella Health'));
    await noSidewaysScroll(page);

    // An employee gets no Clients page; a task that does not exist is said to be none.
    const bob = await openBrowser(t);
    await signIn(bob, base, 'bob@example.com', '#clients');
    await bob.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    await bob.goto(`${base}/#task/999999`);
    await bob.getByRole('heading', { name: 'Task 999999', level: 1 }).waitFor();
    await bob.getByRole('alert').filter({ hasText: 'There is no such task.' }).waitFor();
  });
});
