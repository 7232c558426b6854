// Security events (docs/rules.md#known-devices): recording, paging, access, retention.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it, type TestContext } from 'node:test';
import { schedulePurge } from '../../src/auth/purge-schedule.ts';
import { SECURITY_EVENT_PURGE_INTERVAL_MS } from '../../src/auth/security-event-log.ts';
import {
  ApiClient,
  type SecurityEvent as ClientSecurityEvent,
  MemoryCookieJar,
} from '../../src/client/index.ts';
import type { StoredSecurityEvent } from '../../src/db/repositories/security-events.ts';
import type { SecurityEvent } from '../../src/security-event.ts';
import {
  createTestApp,
  DEMO_PASSWORD,
  type TestApp,
  type TestAppOptions,
  type TestClient,
} from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const URL = '/api/admin/security-events';
const DAY_MS = 86_400_000;
const ADMIN_ID = 4;
const skipPostgres = await skipUnless('postgres');

interface EventJson {
  id: number;
  at: string;
  type: string;
  control: string;
  email: string | null;
  address: string | null;
  instance: string;
  actorId: number | null;
}
interface Page {
  events: EventJson[];
  nextCursor: string | null;
}

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  /** An app on this file's database with no events left from an earlier test, and an admin signed in. */
  const adminApp = async (t: TestContext, options: TestAppOptions = {}) => {
    const testApp = await createTestApp({
      ...options,
      database: kind,
      env: { INSTANCE_ID: 'test-1', ...options.env },
    });
    t.after(testApp.close);
    const admin = testApp.client();
    assert.equal((await admin.login('admin@example.com')).statusCode, 200);
    // After the sign-in, whose own event (signed-in) the tests do not count.
    await testApp.database.db.query('DELETE FROM security_events');
    return { testApp, admin };
  };

  const record = async (testApp: TestApp, ...events: SecurityEvent[]) => {
    for (const event of events) testApp.app.services.securityEvents.record(event);
    await testApp.app.services.securityEvents.flush();
  };

  const page = async (client: TestClient, query = ''): Promise<Page> => {
    const response = await client.get(`${URL}${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<Page>();
  };

  const lock = (n: number): SecurityEvent => ({
    type: 'lock-started',
    control: 'login-account',
    email: `user${n}@example.com`,
  });

  describe(`GET ${URL} (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('answers each recorded event with its time, control, account or address, instance and actor', async (t) => {
      const { testApp, admin } = await adminApp(t);
      const start = testApp.clock.now();
      await record(testApp, { type: 'lock-started', control: 'login-ip', address: '203.0.113.9' });
      testApp.clock.advance(1500);
      await record(testApp, {
        type: 'admin-reset',
        control: 'login-account',
        email: 'alice@example.com',
        actorId: ADMIN_ID,
      });
      testApp.clock.advance(1);
      await record(testApp, {
        type: 'known-device-refused',
        control: 'login-device',
        email: 'bob@example.com',
      });

      const { events, nextCursor } = await page(admin);
      assert.equal(nextCursor, null);
      assert.deepEqual(
        events.map(({ id: _id, ...rest }) => rest),
        [
          {
            at: new Date(start + 1501).toISOString(),
            type: 'known-device-refused',
            control: 'login-device',
            email: 'bob@example.com',
            address: null,
            instance: 'test-1',
            actorId: null,
          },
          {
            at: new Date(start + 1500).toISOString(),
            type: 'admin-reset',
            control: 'login-account',
            email: 'alice@example.com',
            address: null,
            instance: 'test-1',
            actorId: ADMIN_ID,
          },
          {
            at: new Date(start).toISOString(),
            type: 'lock-started',
            control: 'login-ip',
            email: null,
            address: '203.0.113.9',
            instance: 'test-1',
            actorId: null,
          },
        ],
      );
      assert.ok(events.every((event) => Number.isInteger(event.id) && event.id > 0));
    });

    it('orders by time, not by insertion: an event stamped earlier but written later comes after', async (t) => {
      const { testApp, admin } = await adminApp(t);
      const { securityEvents } = testApp.app.services;
      testApp.clock.advance(10_000);
      securityEvents.record(lock(1));
      testApp.clock.advance(-5_000); // another instance's clock, or a batch that waited
      securityEvents.record(lock(2));
      await securityEvents.flush();
      assert.deepEqual(
        (await page(admin)).events.map((event) => event.email),
        ['user1@example.com', 'user2@example.com'],
      );
    });

    it('is read-your-writes: an event recorded just before the request is in the answer', async (t) => {
      const { testApp, admin } = await adminApp(t);
      testApp.app.services.securityEvents.record(lock(1)); // no flush
      assert.deepEqual(
        (await page(admin)).events.map((event) => event.email),
        ['user1@example.com'],
      );
    });

    it('pages newest first by cursor, every event once, ties on time kept apart by id', async (t) => {
      const { testApp, admin } = await adminApp(t);
      // 7 events, two to each millisecond: the cursor must split a tie correctly.
      const events = Array.from({ length: 7 }, (_, n) => lock(n));
      for (const [n, event] of events.entries()) {
        if (n % 2 === 0) testApp.clock.advance(1);
        testApp.app.services.securityEvents.record(event);
      }
      await testApp.app.services.securityEvents.flush();
      const all = (await page(admin, '?limit=200')).events;
      assert.equal(all.length, 7);
      for (let i = 1; i < all.length; i++) {
        const [newer, older] = [all[i - 1]!, all[i]!];
        assert.ok(newer.at > older.at || (newer.at === older.at && newer.id > older.id), 'newest first');
      }

      const seen: EventJson[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const suffix: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const result = await page(admin, `?limit=2${suffix}`);
        assert.ok(result.events.length <= 2);
        seen.push(...result.events);
        cursor = result.nextCursor;
        pages++;
      } while (cursor !== null);
      assert.equal(pages, 4);
      assert.deepEqual(seen, all);
    });

    it('answers 50 events by default and nextCursor null on an exact last page', async (t) => {
      const { testApp, admin } = await adminApp(t);
      await record(testApp, ...Array.from({ length: 51 }, (_, n) => lock(n)));
      const first = await page(admin);
      assert.equal(first.events.length, 50);
      assert.equal(typeof first.nextCursor, 'string');
      const last = await page(admin, `?cursor=${encodeURIComponent(first.nextCursor!)}`);
      assert.equal(last.events.length, 1);
      assert.equal(last.nextCursor, null);
      assert.equal((await page(admin, '?limit=51')).nextCursor, null);
    });

    it('answers 400 VALIDATION_ERROR to a limit outside 1–200 or a cursor it did not issue', async (t) => {
      const { admin } = await adminApp(t);
      for (const query of ['limit=0', 'limit=201', 'limit=-1', 'limit=abc', 'limit=1.5', 'other=1'])
        assertError(await admin.get(`${URL}?${query}`), 400, 'VALIDATION_ERROR');
      const forged = (text: string) => encodeURIComponent(Buffer.from(text).toString('base64url'));
      for (const cursor of [
        'not-a-cursor',
        forged('before:1'),
        forged('after:5'),
        forged('before:x:1'),
        forged('before:99999999999999999:1'),
        forged('before:1700000000000:9999999999999999'),
      ])
        assertError(await admin.get(`${URL}?cursor=${cursor}`), 400, 'VALIDATION_ERROR');
      assert.equal((await admin.get(`${URL}?limit=200`)).statusCode, 200);
      assert.equal((await admin.get(`${URL}?limit=1`)).statusCode, 200);
    });

    it('is for admins only: 401 without a session, 403 FORBIDDEN for an employee', async (t) => {
      const { testApp } = await adminApp(t);
      await record(testApp, lock(1));
      assertError(await testApp.client().get(URL), 401, 'UNAUTHENTICATED');
      const alice = testApp.client();
      await alice.login('alice@example.com');
      assertError(await alice.get(URL), 403, 'FORBIDDEN');
    });
  });

  describe(`security event retention (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('purges exactly the events older than SECURITY_EVENT_RETENTION', async (t) => {
      const { testApp } = await adminApp(t, { env: { SECURITY_EVENT_RETENTION: '2d' } });
      await record(testApp, lock(1));
      testApp.clock.advance(DAY_MS);
      await record(testApp, lock(2));
      testApp.clock.advance(DAY_MS); // lock 1 is now exactly 2 days old: kept
      assert.equal(await testApp.app.services.securityEvents.purgeExpired(), 0);
      testApp.clock.advance(1);
      assert.equal(await testApp.app.services.securityEvents.purgeExpired(), 1);
      const later = testApp.client(); // the admin's session has expired by now
      await later.login('admin@example.com');
      assert.deepEqual(
        (await page(later)).events
          .filter((event) => event.type === 'lock-started')
          .map((event) => event.email),
        ['user2@example.com'],
      );
    });

    it('keeps 90 days by default', async (t) => {
      const { testApp } = await adminApp(t);
      assert.equal(testApp.app.services.config.securityEventRetentionMs, 90 * DAY_MS);
      await record(testApp, lock(1));
      testApp.clock.advance(90 * DAY_MS);
      assert.equal(await testApp.app.services.securityEvents.purgeExpired(), 0);
      testApp.clock.advance(1);
      assert.equal(await testApp.app.services.securityEvents.purgeExpired(), 1);
    });
  });
}

describe('the purge schedule', () => {
  it('purges at once and every interval on an unref’d timer, never overlapping, until stopped', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    let runs = 0;
    let finish: () => void = () => {};
    const errors: unknown[] = [];
    const schedule = schedulePurge(
      () => {
        runs++;
        return new Promise<number>((resolve) => {
          finish = () => resolve(0);
        });
      },
      (error) => errors.push(error),
      1000,
    );
    assert.equal(runs, 1, 'runs at start');
    t.mock.timers.tick(1000);
    assert.equal(runs, 1, 'a run in progress is not overlapped');
    finish();
    await Promise.resolve();
    await Promise.resolve();
    t.mock.timers.tick(1000);
    assert.equal(runs, 2);
    finish();
    await schedule.stop();
    t.mock.timers.tick(5000);
    assert.equal(runs, 2, 'stopped');
    assert.deepEqual(errors, []);
  });

  it('reports a failed purge and tries again at the next interval', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const errors: unknown[] = [];
    let runs = 0;
    const schedule = schedulePurge(
      async () => {
        runs++;
        throw new Error('database down');
      },
      (error) => errors.push(error),
      1000,
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(errors.length, 1);
    t.mock.timers.tick(1000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(runs, 2);
    assert.equal(errors.length, 2);
    await schedule.stop();
  });

  it('does not keep the process alive', () => {
    const real = setInterval(() => {}, 1000);
    clearInterval(real);
    // The schedule's own timer: unref'd, so hasRef() is false.
    const timers: NodeJS.Timeout[] = [];
    const original = globalThis.setInterval;
    globalThis.setInterval = ((fn: () => void, ms: number) => {
      const timer = original(fn, ms);
      timers.push(timer);
      return timer;
    }) as typeof setInterval;
    try {
      const schedule = schedulePurge(
        async () => 0,
        () => {},
        SECURITY_EVENT_PURGE_INTERVAL_MS,
      );
      assert.equal(timers.length, 1);
      assert.equal(timers[0]!.hasRef(), false);
      void schedule.stop();
    } finally {
      globalThis.setInterval = original;
    }
  });
});

describe('the typed client', () => {
  // Compile-time half: only compiles while the client's copy is exactly the server's shape.
  type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
  const sameType = <A, B>(_proof: Equal<A, B>): void => {};
  type Mutable<T> = { -readonly [K in keyof T]: T[K] };

  it('reads security events as the server writes them', () => {
    sameType<Mutable<ClientSecurityEvent>, StoredSecurityEvent>(true);
  });

  it('pages security events for an admin, and resets a lock with the CSRF token', async (t) => {
    const testApp = await createTestApp({ env: { INSTANCE_ID: 'test-1' } });
    t.after(testApp.close);
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = testApp.app.server.address() as AddressInfo;
    const admin = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, cookieJar: new MemoryCookieJar() });
    await admin.login('admin@example.com', DEMO_PASSWORD);
    await testApp.database.db.query('DELETE FROM security_events'); // the sign-in's own too
    for (let n = 0; n < 3; n++) {
      testApp.clock.advance(1);
      testApp.app.services.securityEvents.record({
        type: 'lock-started',
        control: 'login-ip',
        address: `n${n}`,
      });
    }
    const first = await admin.securityEvents({ limit: 2 });
    assert.deepEqual(
      first.events.map((event) => event.address),
      ['n2', 'n1'],
    );
    const rest = await admin.securityEvents({ limit: 2, cursor: first.nextCursor! });
    assert.deepEqual(
      rest.events.map((event) => event.address),
      ['n0'],
    );
    assert.equal(rest.nextCursor, null);
    await admin.resetLoginLock('alice@example.com');
  });
});
