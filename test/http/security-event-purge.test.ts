// The app purges expired security events when it starts and every hour after, on its own clock.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SECURITY_EVENT_PURGE_INTERVAL_MS } from '../../src/auth/security-event-log.ts';
import { ManualClock } from '../../src/clock.ts';
import { SecurityEventsRepository } from '../../src/db/repositories/security-events.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases, testDatabase } from '../helpers/database.ts';

after(closeTestDatabases);

const HOUR_MS = 3_600_000;
const RETENTION_MS = 2 * 24 * HOUR_MS;

describe('the app’s purge of security events', () => {
  it('deletes the expired events at start, then every hour as the clock moves', async (t) => {
    const database = await testDatabase('embedded');
    await database.db.query('DELETE FROM security_events');
    const clock = new ManualClock();
    const lockOf = (email: string, at: number) => ({
      at,
      type: 'lock-started' as const,
      control: 'login-account',
      email,
      address: null,
      instance: 'test-1',
      actorId: null,
    });
    const stored = async () =>
      (await database.db.query<{ email: string }>('SELECT email FROM security_events ORDER BY at, id')).map(
        (row) => row.email,
      );
    /** Lets the purge the timer started reach the database and come back (setImmediate is not mocked). */
    const settle = async (expected: string[]) => {
      for (let turn = 0; turn < 500 && (await stored()).length !== expected.length; turn++)
        await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(await stored(), expected);
    };

    // Left by an earlier run of the service: one past the retention, two within it.
    const now = clock.now();
    await new SecurityEventsRepository(database.db).insert([
      lockOf('expired@example.com', now - RETENTION_MS - 1),
      lockOf('at-the-edge@example.com', now - RETENTION_MS),
      lockOf('next-hour@example.com', now - RETENTION_MS + HOUR_MS),
      lockOf('recent@example.com', now - HOUR_MS),
    ]);
    // The schedule's timer is the app's own, caught and moved by hand instead of waited for an hour.
    t.mock.timers.enable({ apis: ['setInterval'] });
    const testApp = await createTestApp({ clock, env: { SECURITY_EVENT_RETENTION: '2d' } });
    t.after(testApp.close);
    assert.equal(SECURITY_EVENT_PURGE_INTERVAL_MS, HOUR_MS, 'hourly, as the operations guide says');

    await settle(['at-the-edge@example.com', 'next-hour@example.com', 'recent@example.com']);

    // An hour passes on the app's clock and on its timers: the next purge, and only then.
    clock.advance(HOUR_MS);
    t.mock.timers.tick(HOUR_MS - 1);
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await stored()).length, 3, 'nothing is purged before the hour is up');
    t.mock.timers.tick(1);
    await settle(['next-hour@example.com', 'recent@example.com']);

    clock.advance(HOUR_MS + 1);
    t.mock.timers.tick(HOUR_MS);
    await settle(['recent@example.com']);
  });
});
