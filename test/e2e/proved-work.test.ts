// The sign-in form under a flood (docs/rules.md#proved-work), in Chromium: the page solves and gets in.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { ApiClient, MemoryCookieJar } from '../../src/client/index.ts';
import { ManualClock } from '../../src/clock.ts';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD, testConfig } from '../helpers/app.ts';
import { CHROMIUM, openBrowser, skipWithoutChromium } from '../helpers/browser.ts';
import { closeTestDatabases, testDatabase } from '../helpers/database.ts';
import { until } from '../helpers/gate-app.ts';
import { HeldHasher } from '../helpers/held-hasher.ts';

const ALICE = 'alice@example.com';

describe('the sign-in form under a flood, with proved work', { skip: skipWithoutChromium() }, () => {
  before(async () => {
    assert.ok(existsChromium(), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('solves the LOGIN_BUSY challenge in a worker without any interaction, says it is making room, and signs in ahead of the flood', {
    timeout: 90_000,
  }, async (t) => {
    // The server's clock is the test's: a shed answer is held until the test moves it by the bound.
    const clock = new ManualClock(Date.now());
    const hasher = new HeldHasher();
    const database = await testDatabase('embedded');
    await database.reset();
    const env = { LOGIN_HASH_CONCURRENCY: '1', LOGIN_QUEUE_MAX_WAIT: '100ms' };
    const app = await buildApp(testConfig(env), { clock, database: database.db, hasher });
    // Checks still held when the test ends are let through, or the app would wait for them to close.
    t.after(() => {
      hasher.letThrough();
      return app.close();
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const gate = app.services.login.gate;
    /** An attempt of the flood: it proves no work, and says whether a challenge came back. */
    const flood = async (n: number) => {
      let challenged = false;
      await new ApiClient({ baseUrl: base, cookieJar: new MemoryCookieJar() })
        .login(`flood${n}@example.net`, 'a-guess', {
          onWork: () => {
            challenged = true;
            throw new Error('the flood solves nothing');
          },
        })
        .catch(() => {});
      return challenged;
    };

    // One check measured at 50 ms, then the flood: one check running, two waiting (a full line).
    hasher.holdChecks(clock);
    const measured = flood(0);
    await hasher.untilHeld(1);
    hasher.releaseNext(50);
    await measured;
    const flooding = [flood(1)];
    await hasher.untilHeld(1);
    flooding.push(flood(2));
    await until(() => gate.state().queued.shared === 1);
    flooding.push(flood(3));
    await until(() => gate.state().queued.shared === 2);

    const page = await openBrowser(t);
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // From the keyboard alone: type, then Enter in the password field.
    await page.getByLabel('Email').fill(ALICE);
    await page.getByLabel('Password').fill(DEMO_PASSWORD);
    await page.getByLabel('Password').press('Enter');
    // Her first attempt proves no work: shed, its answer held for the bound, then a challenge.
    await until(() => gate.state().held === 1, 'the first attempt held');
    clock.advance(100);
    // The page solves it and comes back at the head of the line; the newest waiting attempt of the flood makes room.
    await page.getByRole('status').filter({ hasText: 'making room for you' }).waitFor();
    await until(() => gate.state().queued.shared === 2 && gate.askedBits() === 1, 'alice back in line');
    assert.equal(
      await flooding[2],
      true,
      'the newest attempt of the flood was answered LOGIN_BUSY, with a challenge',
    );
    assert.equal(
      await page.locator('#login-error').textContent(),
      '',
      'no error is shown while it makes room',
    );
    hasher.releaseNext(50); // the running check ends: alice's is next, ahead of the older waiting one
    await hasher.untilHeld(1);
    assert.equal(hasher.held[0]!.password, DEMO_PASSWORD);
    // Her check, and whatever follows it on her slot (a rehash at today's cost), are let through.
    hasher.letThrough();
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor({ timeout: 10_000 });
    await Promise.all(flooding);
  });
});

function existsChromium(): boolean {
  return skipWithoutChromium() === false;
}
