// A test app whose password checks the test holds, on a hand-moved clock, and moves for its gate.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { ManualClock } from '../../src/clock.ts';
import { createTestApp, DEMO_PASSWORD, type Response, type TestApp, type TestClient } from './app.ts';
import { HeldHasher } from './held-hasher.ts';

const WRONG = 'not-the-password';

export interface GateApp extends TestApp {
  readonly hasher: HeldHasher;
}

/** One check at a time and a bound of 100 ms unless `env` says otherwise; checks held by the test. */
export async function gateApp(t: TestContext, env: Record<string, string> = {}): Promise<GateApp> {
  const hasher = new HeldHasher();
  const clock = new ManualClock();
  const app = await createTestApp({
    clock,
    hasher,
    env: { LOGIN_HASH_CONCURRENCY: '1', LOGIN_QUEUE_MAX_WAIT: '100ms', ...env },
  });
  t.after(app.close);
  await app.database.db.query('UPDATE users SET devices_valid_after = NULL');
  await app.database.db.query('DELETE FROM security_events');
  hasher.holdChecks(clock);
  return Object.assign(app, { hasher });
}

/** Resolves once `condition` holds (checked every 5 ms, for 10 s at most). */
export async function until(condition: () => boolean, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${what} did not come within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Resolves once the gate has this many attempts waiting in each lane. */
export async function untilQueued({ app }: TestApp, shared: number, known = 0): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { queued } = app.services.login.gate.state();
    if (queued.shared === shared && queued.known === known) return;
    if (Date.now() > deadline)
      assert.fail(`queued ${JSON.stringify(queued)}, expected shared ${shared}, known ${known}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A login started now, answered once the test lets its check through. */
export function loginLater(client: TestClient, email: string, password: string): Promise<Response> {
  return client.login(email, password);
}

/** A browser that signed in to `email` once: it holds a device cookie for it (a known device from now on). */
export async function knownBrowser(app: GateApp, email: string): Promise<TestClient> {
  const browser = app.client();
  await browser.fetchCsrf();
  const signIn = browser.login(email, DEMO_PASSWORD);
  await app.hasher.untilHeld(1);
  app.hasher.releaseNext();
  assert.equal((await signIn).statusCode, 200);
  assert.ok(browser.cookie(DEVICE_COOKIE));
  await browser.fetchCsrf();
  return browser;
}

/** Measures one check of 50 ms (the gate's estimate), so that the expected waits below are exact. */
export async function measureOneCheck(app: GateApp): Promise<void> {
  const first = loginLater(app.client(), 'nobody@example.com', WRONG);
  await app.hasher.untilHeld(1);
  app.hasher.releaseNext(50);
  assert.equal((await first).statusCode, 401);
  assert.equal(app.app.services.login.gate.state().checkMs, 50);
}

/** Fills the gate: one check running (held) and `queued` shared attempts waiting; returns their answers. */
export async function fill(app: GateApp, queued: number): Promise<Promise<Response>[]> {
  const answers = [loginLater(app.client(), 'runner@example.com', WRONG)];
  await app.hasher.untilHeld(1);
  for (let i = 0; i < queued; i++) {
    answers.push(loginLater(app.client(), `queued${i}@example.com`, WRONG));
    await untilQueued(app, i + 1);
  }
  return answers;
}

/**
 * Logins the gate sheds: their 503s are held until the bound passes on the test's clock, so this
 * starts them together, waits until all are held, checks that none is answered before the bound,
 * then moves the clock by it (100 ms) and gives their answers.
 */
export async function shedLogins(app: GateApp, logins: (() => Promise<Response>)[]): Promise<Response[]> {
  const gate = app.app.services.login.gate;
  const heldBefore = gate.state().held;
  let answered = false;
  const answers = logins.map((login) =>
    login().finally(() => {
      answered = true;
    }),
  );
  await until(() => answered || gate.state().held === heldBefore + logins.length, 'every shed held');
  assert.equal(answered, false, 'no shed answer before its bound has passed');
  app.clock.advance(100);
  return Promise.all(answers);
}

/**
 * Lets every held and queued check through, one by one, until the gate is idle; each check takes
 * `checkMs` on the clock (0 after a shed has moved the clock to the bound: the queued would expire).
 */
export async function drain(app: GateApp, answers: Promise<Response>[], checkMs = 50): Promise<Response[]> {
  const all = Promise.all(answers);
  let settled = false;
  void all.finally(() => {
    settled = true;
  });
  while (!settled) {
    if (app.hasher.held.length > 0) app.hasher.releaseNext(checkMs);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return all;
}
