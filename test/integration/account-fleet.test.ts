// Two instances caching sessions 10 minutes: an account's change ends its sessions everywhere at once.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { changePassword, freshAccount, NEW_PASSWORD, OWN_PASSWORD, signedIn } from '../helpers/accounts.ts';
import type { TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { sameBrowserOn, twoInstances } from '../helpers/fleet.ts';
import { skipUnless } from '../helpers/services.ts';

const skip = (await skipUnless('redis')) || (await skipUnless('postgres'));
after(closeTestDatabases);

/** Long enough that a session served from a stale cache would still be served when the test ends. */
const CACHE = { SESSION_CACHE_TTL: '10m' };

/**
 * How long (ms) until `browser` is answered 401 on its instance, asking every 5 ms for at most 2 s
 * (the announcement reaches the other instance over its listening connection: a few milliseconds).
 */
async function msUntilSignedOut(browser: TestClient): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 2000) {
    if ((await browser.get('/api/auth/me')).statusCode === 401) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.fail('still signed in on the other instance after 2 s');
}

describe('ending sessions across a PostgreSQL + Redis fleet', { skip }, () => {
  it('ends a session on the other instance at once, though it cached it', async (t) => {
    const { a, b } = await twoInstances(t, CACHE);
    const { email } = await freshAccount(a);
    const laptop = sameBrowserOn(b, await signedIn(a, email));
    assert.equal((await laptop.get('/api/auth/me')).statusCode, 200, 'B caches the laptop’s session');
    const here = await signedIn(a, email);
    const id = (await here.get('/api/auth/sessions'))
      .json<{ sessions: { id: string; current: boolean }[] }>()
      .sessions.find((s) => !s.current)!.id;
    assert.equal((await here.request({ method: 'DELETE', url: `/api/auth/sessions/${id}` })).statusCode, 204);
    const ms = await msUntilSignedOut(laptop);
    t.diagnostic(`signed out on B ${ms.toFixed(1)} ms after the end on A`);
  });

  it('ends a logged-out session on the other instance at once', async (t) => {
    const { a, b } = await twoInstances(t, CACHE);
    const { email } = await freshAccount(a);
    const browser = await signedIn(a, email);
    const onB = sameBrowserOn(b, browser);
    assert.equal((await onB.get('/api/auth/me')).statusCode, 200, 'B caches the session');
    assert.equal((await browser.request({ method: 'POST', url: '/api/auth/logout' })).statusCode, 204);
    await msUntilSignedOut(onB);
  });

  it('signs every other browser out everywhere when the password changes, and when an admin disables the account', async (t) => {
    const { a, b } = await twoInstances(t, CACHE);
    const { email, id } = await freshAccount(a);
    const onB = sameBrowserOn(b, await signedIn(a, email));
    assert.equal((await onB.get('/api/auth/me')).statusCode, 200);
    const here = await signedIn(a, email);
    assert.equal((await changePassword(here, OWN_PASSWORD, NEW_PASSWORD)).statusCode, 200);
    await msUntilSignedOut(onB);
    // The rotated session works on B too.
    const hereOnB = sameBrowserOn(b, here);
    assert.equal((await hereOnB.get('/api/auth/me')).statusCode, 200);

    const adminAccount = await freshAccount(a, 'admin');
    const adminBrowser = await signedIn(a, adminAccount.email);
    const disabled = await adminBrowser.request({
      method: 'PATCH',
      url: `/api/admin/users/${id}`,
      payload: { disabled: true },
    });
    assert.equal(disabled.statusCode, 200, disabled.body);
    await msUntilSignedOut(hereOnB);
    assert.equal((await here.get('/api/auth/me')).statusCode, 401, 'and on A, where it was disabled');
  });

  it('serves a demotion on the other instance at once', async (t) => {
    const { a, b } = await twoInstances(t, CACHE);
    const person = await freshAccount(a, 'admin');
    const onB = sameBrowserOn(b, await signedIn(a, person.email));
    assert.equal((await onB.get('/api/admin/users')).statusCode, 200, 'an admin, cached on B');
    const adminBrowser = await signedIn(a, (await freshAccount(a, 'admin')).email);
    await adminBrowser.request({
      method: 'PATCH',
      url: `/api/admin/users/${person.id}`,
      payload: { role: 'employee' },
    });
    const started = performance.now();
    while ((await onB.get('/api/admin/users')).statusCode !== 403) {
      assert.ok(performance.now() - started < 2000, 'still an admin on B after 2 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
});
