// Sessions, known devices and the own security events of an account (docs/rules.md#accounts), over HTTP.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { LAST_SEEN_INTERVAL_MS } from '../../src/auth/sessions.ts';
import { ManualClock } from '../../src/clock.ts';
import type { Database } from '../../src/db/database.ts';
import { COOKIES_PER_DEVICE_MAX } from '../../src/db/repositories/known-devices.ts';
import { SESSIONS_PER_ACCOUNT_MAX } from '../../src/db/repositories/sessions.ts';
import { SESSION_COOKIE } from '../../src/http/session-cookie.ts';
import { eventsAbout, freshAccount, OWN_PASSWORD, signedIn } from '../helpers/accounts.ts';
import { type TestApp, TestClient, testAppFor, testConfig } from '../helpers/app.ts';
import { closeTestDatabases, testDatabase } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';

after(closeTestDatabases);

interface SessionBody {
  id: string;
  current: boolean;
  createdAt: string;
  lastSeenAt: string;
  userAgent: string | null;
}
const sessionsOf = async (browser: { get(url: string): Promise<{ json<T>(): T }> }) =>
  (await browser.get('/api/auth/sessions')).json<{ sessions: SessionBody[] }>().sessions;

describe('GET /api/auth/sessions', () => {
  it('lists the caller’s own sessions, this one marked current, with their browser and times', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    await signedIn(test, email, OWN_PASSWORD, { 'user-agent': 'Firefox on the laptop' });
    const here = await signedIn(test, email, OWN_PASSWORD, { 'user-agent': 'Chromium here' });
    const stranger = await freshAccount(test);
    await signedIn(test, stranger.email);
    const sessions = await sessionsOf(here);
    assert.equal(sessions.length, 2);
    assert.deepEqual(sessions.map((s) => [s.userAgent, s.current]).sort(), [
      ['Chromium here', true],
      ['Firefox on the laptop', false],
    ]);
    for (const session of sessions) {
      assert.match(session.id, /^[0-9a-f-]{36}$/);
      assert.ok(!here.cookie(SESSION_COOKIE)!.includes(session.id), 'the id is not the cookie');
      assert.equal(session.createdAt, new Date(test.clock.now()).toISOString());
    }
  });

  it('writes a session’s last use at most once a minute, however many requests it serves', async (t) => {
    // The app on this file's database, every statement that writes a last use counted.
    const database = await testDatabase('embedded');
    let touches = 0;
    const counting: Database = {
      ...database.db,
      query: (sql, params) => {
        if (sql.includes('SET last_seen_at')) touches++;
        return database.db.query(sql, params);
      },
    };
    const clock = new ManualClock();
    const built = await buildApp(testConfig({ SESSION_CACHE_TTL: '5m' }), { clock, database: counting });
    t.after(() => built.close());
    const { email } = await freshAccount({ database } as TestApp);
    const browser = new TestClient(built, '198.51.100.201');
    assert.equal((await browser.login(email, OWN_PASSWORD)).statusCode, 200);
    const use = async (times: number) => {
      for (let i = 0; i < times; i++) assert.equal((await browser.get('/api/auth/me')).statusCode, 200);
    };
    await use(20);
    assert.equal(touches, 0, 'signed in just now: nothing to write');
    clock.advance(LAST_SEEN_INTERVAL_MS - 1);
    await use(20);
    assert.equal(touches, 0, 'less than a minute later');
    clock.advance(1);
    await use(20);
    assert.equal(touches, 1, 'one write a minute');
    clock.advance(LAST_SEEN_INTERVAL_MS);
    await use(2);
    assert.equal(touches, 2);
    const [session] = await sessionsOf(browser);
    assert.equal(session!.lastSeenAt, new Date(clock.now()).toISOString());
  });
});

describe('DELETE /api/auth/sessions/:id and POST /api/auth/sessions/end-others', () => {
  it('ends another session of the caller at once; a second try, a stranger’s id or an unknown one is 404', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const laptop = await signedIn(test, email);
    const here = await signedIn(test, email);
    const stranger = await signedIn(test, (await freshAccount(test)).email);
    const laptopId = (await sessionsOf(laptop)).find((s) => s.current)!.id;
    const strangersId = (await sessionsOf(stranger)).find((s) => s.current)!.id;
    assertError(
      await here.request({ method: 'DELETE', url: `/api/auth/sessions/${strangersId}` }),
      404,
      'NOT_FOUND',
    );
    assert.equal((await stranger.get('/api/auth/me')).statusCode, 200, 'the stranger’s session stands');
    assert.equal(
      (await here.request({ method: 'DELETE', url: `/api/auth/sessions/${laptopId}` })).statusCode,
      204,
    );
    assertError(await laptop.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    // A stale page that ends it again: a clear 404, not a crash.
    const again = assertError(
      await here.request({ method: 'DELETE', url: `/api/auth/sessions/${laptopId}` }),
      404,
      'NOT_FOUND',
    );
    assert.match(String(again.message), /ended already/);
    assertError(
      await here.request({
        method: 'DELETE',
        url: '/api/auth/sessions/00000000-0000-4000-8000-000000000000',
      }),
      404,
      'NOT_FOUND',
    );
    for (const bad of ['1', 'not-a-session', `${laptopId}x`, '%00', 'A'.repeat(5000)])
      assertError(
        await here.request({ method: 'DELETE', url: `/api/auth/sessions/${bad}` }),
        400,
        'VALIDATION_ERROR',
      );
    assert.ok((await eventsAbout(test, email)).includes('session-ended account'));
  });

  it('ending the current session signs the caller out', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const here = await signedIn(test, email);
    const id = (await sessionsOf(here)).find((s) => s.current)!.id;
    const response = await here.request({ method: 'DELETE', url: `/api/auth/sessions/${id}` });
    assert.equal(response.statusCode, 204);
    assert.match(String(response.headers['set-cookie']), new RegExp(`${SESSION_COOKIE}=;`));
    assertError(await here.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
  });

  it('ends every other session of the caller and says how many', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const others = [await signedIn(test, email), await signedIn(test, email)];
    const here = await signedIn(test, email);
    const stranger = await signedIn(test, (await freshAccount(test)).email);
    const response = await here.request({ method: 'POST', url: '/api/auth/sessions/end-others' });
    assert.deepEqual(response.json(), { ended: 2 });
    for (const other of others) assertError(await other.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    assert.equal((await here.get('/api/auth/me')).statusCode, 200);
    assert.equal((await stranger.get('/api/auth/me')).statusCode, 200);
    assert.deepEqual((await here.request({ method: 'POST', url: '/api/auth/sessions/end-others' })).json(), {
      ended: 0,
    });
    assert.deepEqual(
      (await eventsAbout(test, email)).filter((e) => e === 'other-sessions-ended account'),
      ['other-sessions-ended account'],
      'one event for the change, none for nothing',
    );
  });

  it('ends cached sessions too: this instance stops serving them at once', async (t) => {
    const test = await testAppFor(t, { env: { SESSION_CACHE_TTL: '10m' } });
    const { email } = await freshAccount(test);
    const laptop = await signedIn(test, email);
    const here = await signedIn(test, email);
    assert.equal((await laptop.get('/api/auth/me')).statusCode, 200, 'now in the cache');
    await here.request({ method: 'POST', url: '/api/auth/sessions/end-others' });
    assertError(await laptop.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
  });
});

describe('known devices', () => {
  it('lists the browsers the caller signed in from, once each however often, and forgets one', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const laptop = await signedIn(test, email, OWN_PASSWORD, { 'user-agent': 'Laptop browser' });
    await laptop.request({ method: 'POST', url: '/api/auth/logout' });
    await laptop.fetchCsrf();
    assert.equal((await laptop.login(email, OWN_PASSWORD)).statusCode, 200, 'the same browser again');
    const here = await signedIn(test, email, OWN_PASSWORD, { 'user-agent': 'This browser' });
    const devices = (await here.get('/api/auth/devices')).json<{
      devices: { id: number; userAgent: string | null; createdAt: string; lastUsedAt: string }[];
    }>().devices;
    assert.equal(devices.length, 2);
    const laptops = devices.find((d) => d.userAgent === null || d.userAgent !== 'This browser')!;
    // Forgotten: that browser's next sign-in is from a new device again.
    assert.equal(
      (await here.request({ method: 'DELETE', url: `/api/auth/devices/${laptops.id}` })).statusCode,
      204,
    );
    assertError(
      await here.request({ method: 'DELETE', url: `/api/auth/devices/${laptops.id}` }),
      404,
      'NOT_FOUND',
    );
    await laptop.request({ method: 'POST', url: '/api/auth/logout' });
    await laptop.fetchCsrf();
    assert.equal((await laptop.login(email, OWN_PASSWORD)).statusCode, 200);
    const events = await eventsAbout(test, email);
    assert.deepEqual(
      events.filter((e) => e.startsWith('signed-in') || e.startsWith('device')),
      [
        'signed-in-new-device password',
        'signed-in password',
        'signed-in-new-device password',
        'device-forgotten account',
        'signed-in-new-device password',
      ],
    );
  });

  it('answers 404 for another account’s device and 400 for ids that are no positive integer', async (t) => {
    const test = await testAppFor(t);
    const here = await signedIn(test, (await freshAccount(test)).email);
    const stranger = await signedIn(test, (await freshAccount(test)).email);
    const [theirs] = (await stranger.get('/api/auth/devices')).json<{ devices: { id: number }[] }>().devices;
    assertError(
      await here.request({ method: 'DELETE', url: `/api/auth/devices/${theirs!.id}` }),
      404,
      'NOT_FOUND',
    );
    assert.equal((await stranger.get('/api/auth/devices')).json<{ devices: unknown[] }>().devices.length, 1);
    for (const bad of ['0', '-1', '1.5', 'abc', '99999999999999999999', '2147483648', '%00'])
      assertError(
        await here.request({ method: 'DELETE', url: `/api/auth/devices/${bad}` }),
        400,
        'VALIDATION_ERROR',
      );
  });
});

describe('GET /api/auth/security-events', () => {
  it('pages the caller’s own events newest first, 50 a page, and none of anyone else’s', async (t) => {
    const test = await testAppFor(t);
    const { email } = await freshAccount(test);
    const stranger = await freshAccount(test);
    await signedIn(test, stranger.email);
    const here = await signedIn(test, email);
    // 60 more sign-ins, a second apart, each signed out again: 61 events about this account.
    for (let i = 0; i < 60; i++) {
      test.clock.advance(1000);
      const browser = await signedIn(test, email);
      assert.equal((await browser.request({ method: 'POST', url: '/api/auth/logout' })).statusCode, 204);
    }
    const first = (await here.get('/api/auth/security-events')).json<{
      events: { type: string; email: string; at: string }[];
      nextCursor: string | null;
    }>();
    assert.equal(first.events.length, 50);
    assert.ok(first.events.every((e) => e.email === email));
    assert.ok(first.events[0]!.at > first.events[49]!.at, 'newest first');
    assert.ok(first.nextCursor);
    const second = (await here.get(`/api/auth/security-events?cursor=${first.nextCursor}`)).json<{
      events: unknown[];
      nextCursor: string | null;
    }>();
    assert.equal(second.events.length, 11);
    assert.equal(second.nextCursor, null);
    assertError(await here.get('/api/auth/security-events?cursor=bm90LW91cnM'), 400, 'VALIDATION_ERROR');
    assertError(await here.get('/api/auth/security-events?limit=500'), 400, 'VALIDATION_ERROR');
    assertError(await test.client().get('/api/auth/security-events'), 401, 'UNAUTHENTICATED');
  });
});

describe('what one password holder can pile up by signing in again and again', () => {
  it('keeps 50 sessions (the least recently used ends, on this instance at once) and 4 cookies on a browser’s device', async (t) => {
    const test = await testAppFor(t, { env: { SESSION_CACHE_TTL: '5m' } });
    const { email, id } = await freshAccount(test);
    const first = await signedIn(test, email);
    assert.equal((await first.get('/api/auth/me')).statusCode, 200, 'cached on this instance');
    // One browser that keeps its device cookie and drops its session each time.
    let device = first.cookie(DEVICE_COOKIE)!;
    for (let i = 1; i < SESSIONS_PER_ACCOUNT_MAX + 10; i++) {
      test.clock.advance(1000);
      const browser = test.client({ remoteAddress: '198.51.100.250' });
      browser.setCookie(DEVICE_COOKIE, device);
      assert.equal((await browser.login(email, OWN_PASSWORD)).statusCode, 200);
      device = browser.cookie(DEVICE_COOKIE)!;
    }
    const count = async (sql: string) => (await test.database.db.query<{ n: number }>(sql, [id]))[0]!.n;
    assert.equal(
      await count('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1'),
      SESSIONS_PER_ACCOUNT_MAX,
    );
    assert.equal(await count('SELECT count(*)::int AS n FROM known_devices WHERE user_id = $1'), 1);
    assert.equal(
      await count(
        'SELECT count(*)::int AS n FROM device_cookies c JOIN known_devices d ON d.id = c.known_device_id WHERE d.user_id = $1',
      ),
      COOKIES_PER_DEVICE_MAX,
    );
    assert.equal((await first.get('/api/auth/me')).statusCode, 401, 'the least recently used session ended');
    await test.app.services.securityEvents.flush();
    assert.equal(
      (await eventsAbout(test, email)).filter((event) => event === 'session-ended session-limit').length,
      10,
      'each session a sign-in ended is an event of the account',
    );
    // The newest cookie is still known: the next sign-in from that browser is a known device's.
    const again = test.client({ remoteAddress: '198.51.100.250' });
    again.setCookie(DEVICE_COOKIE, device);
    assert.equal((await again.login(email, OWN_PASSWORD)).statusCode, 200);
    assert.equal(await count('SELECT count(*)::int AS n FROM known_devices WHERE user_id = $1'), 1);
  });
});
