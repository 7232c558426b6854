// The portal in Chromium for the browser tests: the app on a free port, a fresh context, the login form.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { type AppOptions, buildApp } from '../../src/app.ts';
import { type Clock, systemClock } from '../../src/clock.ts';
import { testConfig } from './app.ts';
import { testDatabase } from './database.ts';
import { servicesRequired } from './services.ts';

/**
 * Debian's Chromium headless shell (package chromium-headless-shell): the same Blink and V8 as the
 * full browser without its window layers, what Playwright itself runs for a headless browser, and
 * cheaper to run. TEST_CHROMIUM names another build to run the tests in (`/usr/bin/chromium`).
 */
export const CHROMIUM = process.env.TEST_CHROMIUM ?? '/usr/bin/chromium-headless-shell';

/**
 * Skip without Chromium, unless CI requires it (REQUIRE_SERVICES=1): then the tests fail. Every
 * browser file calls it at its top, where it also has the file's one Chromium closed once the
 * file's tests are done (see openBrowser).
 */
export function skipWithoutChromium(): string | false {
  if (!closedWithFile) {
    closedWithFile = true;
    after(closeFileBrowser);
  }
  if (existsSync(CHROMIUM) || servicesRequired) return false;
  const message = `Chromium is not installed at ${CHROMIUM} (apt-get install chromium-headless-shell)`;
  console.log(`# skipped: ${message}; set REQUIRE_SERVICES=1 to make this a failure`);
  return message;
}

/**
 * The real app on a free port, on the real clock by default. A test that waits out a countdown
 * passes a ManualClock instead and moves it together with the browser's (page.clock).
 */
export async function startPortal(
  t: TestContext,
  env: Record<string, string> = {},
  clock: Clock = systemClock,
  options: Pick<AppOptions, 'hasher'> = {},
): Promise<string> {
  const database = await testDatabase('embedded');
  await database.reset();
  const app = await buildApp(testConfig(env), { clock, database: database.db, ...options });
  t.after(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** A headless Chromium on a profile directory of its own, as the probes run it. */
export function launchChromium(profile: string, viewport = { width: 1024, height: 700 }) {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: CHROMIUM_ARGS,
  });
}

/** The command line of every Chromium the tests and probes start. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** The file's one Chromium, started by the first openBrowser. */
let fileBrowser: Promise<Browser> | undefined;
/** Whether a hook closes fileBrowser when the file's tests are done (skipWithoutChromium set one). */
let closedWithFile = false;

async function closeFileBrowser(): Promise<void> {
  const browser = fileBrowser;
  fileBrowser = undefined;
  closedWithFile = false;
  await (await browser)?.close();
}

/**
 * A browser of its own for test `t` (cookies, storage, permissions, clock), as fresh as a new
 * profile; collects script errors and CSP violations to assert on. It is a context in the file's
 * one Chromium: starting Chromium took 1.3-2 s of each test, a context takes a fraction of that.
 */
export async function openBrowser(t: TestContext, viewport = { width: 1024, height: 700 }) {
  let context: BrowserContext;
  if (closedWithFile) {
    fileBrowser ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    context = await (await fileBrowser).newContext({ viewport });
    t.after(() => context.close());
  } else {
    // Nothing would close a shared Chromium: one for this test alone, on a profile of its own.
    const profile = await mkdtemp(join(tmpdir(), 'portal-e2e-'));
    context = await launchChromium(profile, viewport);
    t.after(async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    });
  }
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A 401 or 429 is logged by the browser as a failed resource; those are expected here.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(`console: ${message.text()}`);
  });
  t.after(() => assert.deepEqual(problems, [], 'no script errors or CSP violations'));
  return page;
}

export async function submitLogin(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** The status and body of the next answer to `path`, so that a refused request says why, not just a timeout. */
function answerTo(page: Page, path: string): Promise<string> {
  return page
    .waitForResponse((response) => new URL(response.url()).pathname === path)
    .then(async (response) => `${response.status()} ${await response.text()}`);
}

/**
 * What a person does through a deployment: opens `base`, signs in, reassigns `taskIds` to
 * `assignee` (a name in the list) and sees them assigned after a reload. Used through nginx and
 * through the compose fleet, where the browser's Origin carries the proxy's port.
 */
export async function signInAndReassign(
  page: Page,
  base: string,
  {
    email,
    password,
    taskIds,
    assignee,
  }: { email: string; password: string; taskIds: number[]; assignee: string },
): Promise<void> {
  await page.goto(`${base}/`);
  const login = answerTo(page, '/api/auth/login');
  await submitLogin(page, email, password);
  assert.match(await login, /^200 /, `the sign-in at ${base}`);
  await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
  for (const id of taskIds)
    await page.getByRole('checkbox', { name: new RegExp(`^Select task ${id}:`) }).check();
  await page.getByLabel('New assignee').selectOption({ label: assignee });
  const bulk = answerTo(page, '/api/employee/tasks/bulk');
  const plural = taskIds.length === 1 ? 'task' : 'tasks';
  await page.getByRole('button', { name: `Reassign ${taskIds.length} ${plural}` }).click();
  assert.match(await bulk, /^200 /, `the reassignment at ${base}`);
  const outcome = `${taskIds.length} succeeded, 0 failed. Reassigned to ${assignee}.`;
  await page.locator('#bulk-outcome', { hasText: outcome }).waitFor();
  await page.reload();
  for (const id of taskIds) {
    const cell = page.locator(`tr[data-task-id="${id}"] td.assignee`);
    await cell.waitFor();
    assert.equal(await cell.textContent(), assignee, `task ${id} after a reload`);
  }
}
