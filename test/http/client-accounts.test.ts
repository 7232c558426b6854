// The typed client's account calls (docs/rules.md#accounts) against the real server on a real port.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { ApiClient, ApiError, isApiError, MemoryCookieJar } from '../../src/client/index.ts';
import { freshAccount, NEW_PASSWORD, OWN_PASSWORD } from '../helpers/accounts.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

describe('ApiClient, accounts', () => {
  it('changes a password, lists and ends sessions and devices, pages its events, and runs People as an admin', async (t) => {
    const test = await createTestApp();
    t.after(test.close);
    await test.app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`;
    const browser = () => new ApiClient({ baseUrl, cookieJar: new MemoryCookieJar() });

    const { email } = await freshAccount(test);
    const laptop = browser();
    await laptop.login(email, OWN_PASSWORD);
    const here = browser();
    await here.login(email, OWN_PASSWORD);
    const sessions = await here.sessions();
    assert.equal(sessions.length, 2);
    assert.equal(sessions.filter((s) => s.current).length, 1);
    assert.equal(await here.endOtherSessions(), 1);
    await assert.rejects(laptop.me(), (error) => isApiError(error, 'UNAUTHENTICATED'));
    const [device] = await here.devices();
    assert.ok(device);

    const refused = await here.changePassword(OWN_PASSWORD, 'Password1234').catch((error: unknown) => error);
    assert.ok(refused instanceof ApiError && refused.code === 'PASSWORD_REFUSED');
    assert.equal(refused.body?.reason, 'common');
    await here.changePassword(OWN_PASSWORD, NEW_PASSWORD);
    assert.equal((await here.me()).email, email, 'signed in still, on the rotated session');
    await here.endOtherSessions(); // the rotated token works for unsafe calls
    await here.forgetDevice(device.id); // this browser's, kept by the change
    assert.deepEqual(await here.devices(), []);
    const events = await here.accountEvents();
    assert.ok(events.events.some((e) => e.type === 'password-changed'));
    assert.equal(events.nextCursor, null);

    const admin = browser();
    await admin.login((await freshAccount(test, 'admin')).email, OWN_PASSWORD);
    const { user, temporaryPassword } = await admin.createUser({
      email: `client-${Date.now()}@example.com`,
      name: 'Client Made',
      role: 'employee',
    });
    assert.equal(user.mustChangePassword, true);
    assert.equal((await admin.updateUser(user.id, { name: 'Renamed' })).name, 'Renamed');
    const again = await admin.resetUserPassword(user.id);
    assert.notEqual(again, temporaryPassword);
    assert.ok((await admin.users()).some((u) => u.id === user.id && u.name === 'Renamed'));
    const colleague = browser();
    assert.equal((await colleague.login(user.email, again)).mustChangePassword, true);
    await assert.rejects(colleague.tasks(), (error) => isApiError(error, 'PASSWORD_CHANGE_REQUIRED'));
    await colleague.changePassword(again, NEW_PASSWORD);
    assert.equal((await colleague.me()).mustChangePassword, false);
  });
});
