// A reassignment whose answer is lost is sent again under its Idempotency-Key, and said applied once.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page, Route } from 'playwright-core';
import { ensurePortalBuilt } from '../../web/build.ts';
import { BULK_APPLIED_ONCE, BULK_FATE_UNKNOWN } from '../../web/src/shared/wording.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium, startPortal, submitLogin } from '../helpers/browser.ts';
import { closeTestDatabases, testDatabase } from '../helpers/database.ts';

const BOB = { id: 2, name: 'Bob Nguyen' };

/**
 * Every bulk reassignment the page sends: its key; the first `lose` of them reach the server, and
 * their answers are lost on the way back (the connection breaks), as in a restart behind a proxy.
 */
async function losingAnswers(page: Page, lose: number): Promise<{ keys: string[] }> {
  const keys: string[] = [];
  await page.route('**/api/employee/tasks/bulk', async (route: Route) => {
    keys.push(route.request().headers()['idempotency-key'] ?? '(none)');
    if (keys.length > lose) return route.continue();
    await route.fetch(); // applied on the server …
    await route.abort('connectionreset'); // … and the answer never arrives
  });
  return { keys };
}

/** How many times the tasks' rows were changed since `since`, by the database's own clock. */
async function changedRows(taskIds: readonly number[], since: string): Promise<number> {
  const database = await testDatabase('embedded');
  const rows = await database.db.query<{ changed: number }>(
    'SELECT count(*)::int AS changed FROM tasks WHERE id = ANY($1) AND updated_at > $2::timestamptz',
    [taskIds, since],
  );
  return rows[0]!.changed;
}

async function reassign(page: Page, taskIds: readonly number[]): Promise<void> {
  for (const id of taskIds)
    await page.getByRole('checkbox', { name: new RegExp(`^Select task ${id}:`) }).check();
  await page.getByLabel('New assignee').selectOption({ label: BOB.name });
  await page.getByRole('button', { name: `Reassign ${taskIds.length} tasks` }).click();
}

describe('a reassignment whose answer is lost', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('is sent again by the client with the same key, and the page says it was applied once', {
    timeout: 60_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    const { keys } = await losingAnswers(page, 1);
    await page.goto(`${base}/`);
    await submitLogin(page, 'alice@example.com', DEMO_PASSWORD);
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    const [{ now }] = await (await testDatabase('embedded')).db.query<{ now: string }>(
      'SELECT now()::text AS now',
    );

    await reassign(page, [2, 3]);
    await page
      .locator('#bulk-outcome', { hasText: `2 succeeded, 0 failed. Reassigned to ${BOB.name}.` })
      .waitFor();
    await page.locator('#bulk-applied-once', { hasText: BULK_APPLIED_ONCE }).waitFor();
    assert.equal(keys.length, 2, 'sent twice');
    assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
    assert.equal(keys[1], keys[0], 'under the same key');
    assert.equal(await changedRows([2, 3], now!), 2, 'each task changed once');
    await page.locator('#bulk-budget', { hasText: '29 of 30 bulk reassignments left' }).waitFor();
  });

  it('says it may have been applied when every try is lost, and sends the same key when Reassign is pressed again', {
    timeout: 60_000,
  }, async (t) => {
    const base = await startPortal(t);
    const page = await openBrowser(t);
    // The client's first try and its two retries all lose their answers; the person's next press does not.
    const { keys } = await losingAnswers(page, 3);
    await page.goto(`${base}/`);
    await submitLogin(page, 'alice@example.com', DEMO_PASSWORD);
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();

    await reassign(page, [7, 8]);
    await page.locator('#bulk-error', { hasText: BULK_FATE_UNKNOWN }).waitFor({ timeout: 15_000 });
    assert.equal(keys.length, 3);
    assert.equal(new Set(keys).size, 1, 'the client sent it again with its key, twice');
    // The selection and the assignee are still there: the same reassignment, pressed again.
    await page.getByRole('button', { name: 'Reassign 2 tasks' }).click();
    await page.locator('#bulk-applied-once', { hasText: BULK_APPLIED_ONCE }).waitFor();
    assert.equal(keys.length, 4);
    assert.equal(keys[3], keys[0], 'the page kept the key for the same reassignment');
    await page.locator('#bulk-budget', { hasText: '29 of 30 bulk reassignments left' }).waitFor();

    // Another reassignment is another key.
    await reassign(page, [9, 10]);
    await page
      .locator('#bulk-outcome', { hasText: `2 succeeded, 0 failed. Reassigned to ${BOB.name}.` })
      .waitFor();
    assert.equal(keys.length, 5);
    assert.notEqual(keys[4], keys[0]);
    assert.equal(
      await page.locator('#bulk-applied-once').count(),
      0,
      'a first answer says nothing of retries',
    );
  });
});
