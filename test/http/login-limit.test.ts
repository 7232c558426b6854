// docs/rules.md#rate-limits, login failures: per account and address, before the check, atomic.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertNoRateLimitHeaders, assertRefused } from '../helpers/rate-limit-headers.ts';

after(closeTestDatabases);

const WRONG = 'not-the-password';

describe('POST /api/auth/login under the login-failure limiter', () => {
  it('locks an account after its failure budget, refusing even the correct password', async (t) => {
    const { client, clock, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' } });
    t.after(close);
    const attacker = client();
    for (let i = 0; i < 3; i++) {
      const failure = await attacker.login('alice@example.com', WRONG);
      assert.equal(failure.json<{ code: string }>().code, 'INVALID_CREDENTIALS');
      assertNoRateLimitHeaders(failure);
    }
    const owner = client();
    const refused = assertRefused(
      await owner.login('alice@example.com'),
      'LOGIN_RATE_LIMIT',
      'login-account',
    );
    assert.equal(refused.limit, 3);
    assert.equal(refused.reset, 900);
    clock.advance(refused.retryAfter! * 1000);
    assert.equal((await owner.login('alice@example.com')).statusCode, 200, 'open again after Retry-After');
  });

  it('keys the account by the trimmed, case-folded email, whether or not it exists', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' } });
    t.after(close);
    const attacker = client();
    await attacker.login('  Alice@Example.COM ', WRONG);
    await attacker.login('alice@example.com', WRONG);
    assertRefused(await attacker.login('ALICE@example.com'), 'LOGIN_RATE_LIMIT', 'login-account');
    await attacker.login('ghost@example.com', WRONG);
    await attacker.login('Ghost@example.com', WRONG);
    const ghost = await attacker.login('ghost@example.com', WRONG);
    assertRefused(ghost, 'LOGIN_RATE_LIMIT', 'login-account');
  });

  it('clears the account counter on success, and only counts failed checks', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_ACCOUNT: '3/15m' } });
    t.after(close);
    const alice = client();
    await alice.login('alice@example.com', WRONG);
    await alice.login('alice@example.com', WRONG);
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    // Another browser: alice's own is now a known device, counted apart (known-devices.test.ts).
    const other = client();
    for (let i = 0; i < 3; i++) assert.equal((await other.login('alice@example.com', WRONG)).statusCode, 401);
    assertRefused(await other.login('alice@example.com', WRONG), 'LOGIN_RATE_LIMIT', 'login-account');
  });

  it('does not count a refused (429) attempt as a failure', async (t) => {
    const { client, clock, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/1m' } });
    t.after(close);
    const attacker = client();
    await attacker.login('bob@example.com', WRONG);
    clock.advance(30_000);
    await attacker.login('bob@example.com', WRONG);
    for (let i = 0; i < 5; i++) await attacker.login('bob@example.com', WRONG);
    clock.advance(30_000);
    // Only the first failure has left the window: exactly one attempt is open, however many 429s came.
    assert.equal((await attacker.login('bob@example.com', WRONG)).statusCode, 401);
    assertRefused(await attacker.login('bob@example.com'), 'LOGIN_RATE_LIMIT', 'login-account');
  });

  it('limits failures per address across accounts (password spraying); success does not clear it', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_IP: '3/15m' } });
    t.after(close);
    const sprayer = client({ remoteAddress: '203.0.113.66' });
    await sprayer.login('alice@example.com', WRONG);
    await sprayer.login('bob@example.com', WRONG);
    assert.equal((await sprayer.login('carol@example.com')).statusCode, 200);
    await sprayer.login('nobody@example.com', WRONG);
    const refused = assertRefused(await sprayer.login('admin@example.com'), 'LOGIN_RATE_LIMIT', 'login-ip');
    assert.equal(refused.limit, 3);
    assert.equal(
      (await client().login('admin@example.com')).statusCode,
      200,
      'another address is unaffected',
    );
  });

  it('lets parallel failed logins spend exactly the budget, never more', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_ACCOUNT: '5/15m' } });
    t.after(close);
    const attackers = Array.from({ length: 25 }, () => client());
    await Promise.all(attackers.map((a) => a.fetchCsrf()));
    const responses = await Promise.all(attackers.map((a) => a.login('carol@example.com', WRONG)));
    const codes = responses.map((r) => r.json<{ code: string }>().code);
    assert.equal(codes.filter((c) => c === 'INVALID_CREDENTIALS').length, 5);
    assert.equal(codes.filter((c) => c === 'LOGIN_RATE_LIMIT').length, 20);
  });

  it('refuses an address over its budget before it leaves state for the accounts it names', async (t) => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
    const { client, close } = await createTestApp({ clock, store, env: { RATE_LIMIT_LOGIN_IP: '5/15m' } });
    t.after(close);
    const sprayer = client();
    await sprayer.fetchCsrf();
    const keysBefore = store.size;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => sprayer.login(`sprayed-${i}@example.com`, WRONG)),
    );
    const codes = responses.map((r) => r.json<{ code: string }>().code);
    assert.equal(codes.filter((c) => c === 'INVALID_CREDENTIALS').length, 5);
    assert.equal(codes.filter((c) => c === 'LOGIN_RATE_LIMIT').length, 15);
    // The address's key, and one per account of the 5 attempts the address let through: no more.
    assert.equal(store.size - keysBefore, 1 + 5);
  });

  it('lets an admin clear an account’s lock', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m' } });
    t.after(close);
    await client().login('bob@example.com', WRONG);
    assertRefused(await client().login('bob@example.com'), 'LOGIN_RATE_LIMIT', 'login-account');
    const admin = client();
    await admin.login('admin@example.com');
    const reset = await admin.request({
      method: 'POST',
      url: '/api/admin/login-locks/reset',
      payload: { email: ' BOB@example.com' },
    });
    assert.equal(reset.statusCode, 204);
    assert.equal((await client().login('bob@example.com')).statusCode, 200);
  });

  it('refuses a locked address whatever its body: a malformed one gets the 429, not a 400', async (t) => {
    const { client, close } = await createTestApp({ env: { RATE_LIMIT_LOGIN_IP: '1/15m' } });
    t.after(close);
    const sprayer = client();
    await sprayer.login('alice@example.com', WRONG);
    const malformed = await sprayer.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    assertRefused(malformed, 'LOGIN_RATE_LIMIT', 'login-ip');
  });

  it('answers a 429 with the longest wait among the controls refusing it, and admits a client that waits it', async (t) => {
    const clock = new ManualClock();
    const { client, close } = await createTestApp({
      clock,
      env: { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m', RATE_LIMIT_LOGIN_IP: '3/15m' },
    });
    t.after(close);
    const ADDRESS = '203.0.113.9';
    // A browser on that address that signed in to alice before: it holds a device cookie (for alice).
    const alices = client({ remoteAddress: ADDRESS });
    assert.equal((await alices.login('alice@example.com')).statusCode, 200);
    // The address spends its budget first (its window ends at 15 min) ...
    const sprayer = client({ remoteAddress: ADDRESS });
    for (const email of ['x@example.com', 'y@example.com', 'z@example.com'])
      assert.equal((await sprayer.login(email, WRONG)).statusCode, 401);
    // ... bob's account five minutes later, from elsewhere (its window ends at 20 min).
    clock.advance(300_000);
    for (let i = 0; i < 2; i++)
      assert.equal((await client().login('bob@example.com', WRONG)).statusCode, 401);
    // Both refuse bob's owner on that address: the account's wait, the longer, is the one reported.
    const owner = client({ remoteAddress: ADDRESS });
    const refused = assertRefused(await owner.login('bob@example.com'), 'LOGIN_RATE_LIMIT', 'login-account');
    assert.equal(refused.retryAfter, 900);
    // The same from a browser with a device cookie (for another account): checked in the handler.
    const viaCookie = assertRefused(
      await alices.login('bob@example.com'),
      'LOGIN_RATE_LIMIT',
      'login-account',
    );
    assert.equal(viaCookie.retryAfter, 900);
    // Waiting what it was told, the client is admitted by every control.
    clock.advance(refused.retryAfter! * 1000);
    assert.equal((await owner.login('bob@example.com')).statusCode, 200);
  });
});
