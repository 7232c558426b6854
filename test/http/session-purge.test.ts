// Expired sessions are deleted on a schedule that never holds the process; close stops it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SESSION_PURGE_INTERVAL_MS } from '../../src/auth/sessions.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

const TTL_MS = 60 * 60 * 1000;

async function sessionCount(testApp: TestApp): Promise<number> {
  const [row] = await testApp.database.db.query<{ count: string | number }>(
    'SELECT count(*) AS count FROM sessions',
  );
  return Number(row!.count);
}

/** Signs in one new client per email; every login makes a session row. */
async function signIn(testApp: TestApp, ...emails: string[]) {
  const clients = [];
  for (const email of emails) {
    const client = testApp.client();
    assert.equal((await client.login(email)).statusCode, 200);
    clients.push(client);
  }
  return clients;
}

describe('expired sessions', () => {
  it('are deleted by the purge, and live ones kept', async (t) => {
    const testApp = await createTestApp({ env: { SESSION_TTL: '1h' } });
    t.after(testApp.close);
    await signIn(testApp, 'alice@example.com', 'bob@example.com', 'carol@example.com');
    testApp.clock.advance(TTL_MS);
    const [fresh] = await signIn(testApp, 'alice@example.com');
    assert.equal(await sessionCount(testApp), 4);

    assert.equal(await testApp.app.services.sessions.purgeExpired(), 3);
    assert.equal(await sessionCount(testApp), 1, 'the table shrinks to the live session');
    assert.equal((await fresh!.get('/api/auth/me')).statusCode, 200, 'the live session still serves');
    assert.equal(await testApp.app.services.sessions.purgeExpired(), 0, 'a second purge finds nothing');
  });

  it('are purged by an unref’d timer that close stops', async (t) => {
    // The app's own timer, caught as it is made: driven by hand rather than waited for.
    const made: { callback: () => void; ms: number; timer: NodeJS.Timeout }[] = [];
    const cleared = new Set<unknown>();
    const { setInterval: realSet, clearInterval: realClear } = globalThis;
    globalThis.setInterval = ((callback: () => void, ms: number) => {
      const timer = realSet(callback, ms);
      made.push({ callback, ms, timer });
      return timer;
    }) as typeof setInterval;
    globalThis.clearInterval = ((timer: NodeJS.Timeout) => {
      cleared.add(timer);
      realClear(timer);
    }) as typeof clearInterval;
    let testApp: TestApp;
    try {
      testApp = await createTestApp({ env: { SESSION_TTL: '1h' } });
    } finally {
      globalThis.setInterval = realSet;
    }
    t.after(() => {
      globalThis.clearInterval = realClear;
    });
    const purges = made.filter((entry) => entry.ms === SESSION_PURGE_INTERVAL_MS);
    assert.equal(purges.length, 1, 'one session purge timer');
    const [purge] = purges;
    assert.equal(purge!.timer.hasRef(), false, 'the timer never keeps the process alive');

    await signIn(testApp, 'alice@example.com', 'bob@example.com');
    testApp.clock.advance(TTL_MS);
    purge!.callback();
    for (let turn = 0; turn < 200 && (await sessionCount(testApp)) > 0; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(await sessionCount(testApp), 0, 'the tick deleted the expired sessions');

    await testApp.close();
    assert.ok(cleared.has(purge!.timer), 'close stops the timer');
  });
});
