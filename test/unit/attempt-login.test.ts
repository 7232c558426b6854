// The sign-ins' order without HTTP: attemptLogin and attemptPasskeyLogin on a hand-moved clock.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { DeviceCookies } from '../../src/auth/devices.ts';
import type { AssertionOutcome, AuthenticationResponseJSON } from '../../src/auth/passkeys.ts';
import { hashPassword, PasswordChecker } from '../../src/auth/passwords.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type { StoredCredential } from '../../src/db/repositories/passkeys.ts';
import type { Credentials, PresentedDevice } from '../../src/db/repositories/users.ts';
import { normaliseEmail } from '../../src/email.ts';
import { attemptLogin, type PasswordAttempt } from '../../src/login/attempt-login.ts';
import { attemptPasskeyLogin } from '../../src/login/attempt-passkey-login.ts';
import { Login } from '../../src/login/login.ts';
import { MAX_WAITING_PER_ACCOUNT } from '../../src/login/login-gate.ts';
import type { LoginOutcome } from '../../src/login/outcome.ts';
import { RateLimitEngine, type Verdict } from '../../src/rate-limit/engine.ts';
import { type Caller, type ControlName, callerWith, keyFor } from '../../src/rate-limit/policy.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import type { SecurityEvent } from '../../src/security-event.ts';
import { TEST_PASSWORD_HASH_COST } from '../helpers/database.ts';
import { HeldHasher } from '../helpers/held-hasher.ts';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const PASSWORD = 'the-right-password';
const WRONG = 'not-the-password';
const ALICE = 'alice@example.com';

/** An account lookup kept in memory: what it was asked, in order, and what it stored. */
class Accounts {
  readonly lookups: string[] = [];
  readonly stored: { userId: number; passwordHash: string }[] = [];
  readonly byEmail = new Map<string, Credentials>();
  /** Called as a new hash is stored (the test looks at the gate then). */
  onStore: () => void = () => {};

  /** Every device cookie the tests issue stands for a device row of its account (docs/rules.md#accounts). */
  async findCredentials(email: string, device: PresentedDevice | null = null): Promise<Credentials | null> {
    this.lookups.push(email);
    const found = this.byEmail.get(normaliseEmail(email));
    return found ? { ...found, deviceKnown: device !== null } : null;
  }

  async passwordOf(userId: number): Promise<{ passwordHash: string; expiresAt: number | null } | null> {
    const found = [...this.byEmail.values()].find((credentials) => credentials.user.id === userId);
    return found ? { passwordHash: found.passwordHash, expiresAt: found.passwordExpiresAt } : null;
  }

  async updatePasswordHash(userId: number, passwordHash: string): Promise<void> {
    this.onStore();
    this.stored.push({ userId, passwordHash });
  }

  /** Only the budget report asks it (Login.knownDeviceId), never an attempt. */
  async deviceStanding(): Promise<null> {
    return null;
  }
}

/** The passkey ceremonies' two steps at login, scripted: which challenges were taken, how many answers verified. */
class Ceremonies {
  readonly taken: string[] = [];
  /** Whether the service still holds the challenge an answer carries (not expired, replaced or never issued). */
  challengeHeld = true;
  verified = 0;
  outcome: AssertionOutcome = { ok: true, counter: 2 };

  async takeSignInChallenge(_response: AuthenticationResponseJSON, binding: string): Promise<string | null> {
    this.taken.push(binding);
    return this.challengeHeld ? 'the-challenge' : null;
  }

  async verifyAssertion(): Promise<AssertionOutcome> {
    this.verified++;
    return this.outcome;
  }
}

class Passkeys {
  readonly byId = new Map<string, StoredCredential>();
  /** What recordUse answers: false when another sign-in moved the counter first; an Error when the database is away. */
  recordUseAnswer: boolean | Error = true;

  async findCredential(credentialId: string): Promise<StoredCredential | null> {
    return this.byId.get(credentialId) ?? null;
  }

  async recordUse(): Promise<boolean> {
    if (this.recordUseAnswer instanceof Error) throw this.recordUseAnswer;
    return this.recordUseAnswer;
  }
}

const callerAt = (address: string): Caller => ({
  userId: null,
  account: null,
  deviceId: null,
  ipKey: () => address,
  inTrustedNetwork: () => false,
});

/** Resolves once `condition` holds (checked every millisecond, for 5 s at most). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${what} did not come within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Whether `promise` has settled yet (after the callbacks already due have run). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

/**
 * The login defence as app.ts builds it, over a memory store, a hand-moved clock and checks the test
 * holds: one check at a time, a bound of 100 ms, each check taken to cost 50 ms until measured (so
 * one running and two waiting fill the gate, and a fourth is shed on arrival).
 */
async function setup(t: TestContext, env: Record<string, string> = {}) {
  const clock = new ManualClock();
  const config = loadConfig({
    NODE_ENV: 'test',
    SESSION_SECRET: SECRET,
    PASSWORD_HASH_COST: String(TEST_PASSWORD_HASH_COST),
    LOGIN_HASH_CONCURRENCY: '1',
    LOGIN_QUEUE_MAX_WAIT: '100ms',
    ...env,
  });
  const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
  const engine = new RateLimitEngine(config.rateLimits, store, { clock, log: { info() {} } });
  const hasher = new HeldHasher();
  const passwords = await PasswordChecker.create(TEST_PASSWORD_HASH_COST, hasher, () => clock.now());
  const accounts = new Accounts();
  accounts.byEmail.set(ALICE, {
    user: { id: 1, email: ALICE, name: 'Alice', role: 'employee', mustChangePassword: false },
    passwordHash: await hashPassword(PASSWORD, TEST_PASSWORD_HASH_COST),
    devicesValidAfter: null,
    disabledAt: null,
    passwordExpiresAt: null,
    deviceKnown: false,
  });
  const events: SecurityEvent[] = [];
  const eventWatchers: ((event: SecurityEvent) => void)[] = [];
  const devices = new DeviceCookies({ secret: SECRET, ttlMs: 86_400_000, clock });
  const ceremonies = new Ceremonies();
  const passkeys = new Passkeys();
  const login = new Login({
    gate: config.loginGate,
    initialCheckMs: 50,
    secret: SECRET,
    instance: 'test',
    clock,
    engine,
    claims: store,
    events: {
      record(event) {
        for (const watch of eventWatchers) watch(event);
        events.push(event);
      },
    },
    accounts,
    passwords,
    devices,
    passkeys,
    ceremonies,
  });
  t.after(() => login.close());
  hasher.holdChecks(clock);

  /** What is left of a login control's budget for this caller (and account, or device). */
  const remaining = (
    name: ControlName,
    address: string,
    parts: { email?: string; deviceId?: string } = {},
  ) => {
    const subject = callerWith(callerAt(address), {
      account: parts.email === undefined ? null : normaliseEmail(parts.email),
      deviceId: parts.deviceId ?? null,
    });
    const verdict = engine.peek(name, keyFor(engine.controls[name].control, subject)!);
    assert.ok(!(verdict instanceof Promise), 'the memory store answers at once');
    return verdict.decision.remaining;
  };

  /** A password sign-in from `address`, started now. */
  const attempt = (address: string, fields: Partial<PasswordAttempt> = {}): Promise<LoginOutcome> =>
    attemptLogin(login.password, {
      email: ALICE,
      password: WRONG,
      deviceCookie: undefined,
      caller: callerAt(address),
      ...fields,
    });

  /** Lets the held checks through one by one, each taking 50 ms, until `outcomes` have all settled. */
  const drain = async (outcomes: Promise<unknown>[]) => {
    const all = Promise.allSettled(outcomes);
    while (!(await settled(all))) {
      if (hasher.held.length > 0) hasher.releaseNext(50);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return all;
  };

  /** Calls `watch` as each security event is recorded. */
  const onEvent = (watch: (event: SecurityEvent) => void) => eventWatchers.push(watch);

  return {
    clock,
    engine,
    hasher,
    accounts,
    events,
    onEvent,
    devices,
    ceremonies,
    passkeys,
    login,
    remaining,
    attempt,
    drain,
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** Fills the gate: one attempt's check running (held) and two waiting; returns their outcomes. */
async function fill({ attempt, hasher, login }: Setup): Promise<Promise<LoginOutcome>[]> {
  const outcomes = [attempt('192.0.2.1', { email: 'runner@example.com' })];
  await hasher.untilHeld(1);
  outcomes.push(attempt('192.0.2.2', { email: 'first@example.com' }));
  outcomes.push(attempt('192.0.2.3', { email: 'second@example.com' }));
  await until(() => login.gate.state().queued.shared === 2, 'two attempts waiting');
  return outcomes;
}

describe('attemptLogin', () => {
  it('signs in with the right password: the account’s failures cleared, the address’s unit given back', async (t) => {
    const s = await setup(t);
    const wrong = s.attempt('198.51.100.1');
    await s.hasher.untilHeld(1);
    s.hasher.releaseNext();
    assert.deepEqual(await wrong, { kind: 'invalid' });
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 9, 'the failure is counted');

    const right = s.attempt('198.51.100.1', { password: PASSWORD });
    await s.hasher.untilHeld(1);
    s.hasher.releaseNext();
    const outcome = await right;
    assert.equal(outcome.kind, 'signed-in');
    assert.equal(outcome.kind === 'signed-in' && outcome.user.email, ALICE);
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 10);
    assert.equal(s.remaining('login-ip', '198.51.100.1'), 99, 'the failure still counts by address');
    assert.deepEqual(s.login.gate.state().queued, { known: 0, shared: 0 });
    assert.equal(s.login.gate.state().running, 0);
  });

  it('answers a wrong password, an unknown email and a disabled account alike, after one check each, each a failure', async (t) => {
    const s = await setup(t);
    s.accounts.byEmail.set('carol@example.com', {
      user: { id: 3, email: 'carol@example.com', name: 'Carol', role: 'employee', mustChangePassword: false },
      passwordHash: await hashPassword(PASSWORD, TEST_PASSWORD_HASH_COST),
      devicesValidAfter: null,
      disabledAt: 1,
      passwordExpiresAt: null,
      deviceKnown: false,
    });
    const outcomes = [
      s.attempt('198.51.100.1'),
      s.attempt('198.51.100.1', { email: 'nobody@example.com', password: PASSWORD }),
      s.attempt('198.51.100.1', { email: 'carol@example.com', password: PASSWORD }),
    ];
    const answers = await s.drain(outcomes);
    assert.deepEqual(
      answers.map((answer) => answer.status === 'fulfilled' && answer.value),
      [{ kind: 'invalid' }, { kind: 'invalid' }, { kind: 'invalid' }],
    );
    assert.equal(s.hasher.started.length, 3, 'one check each');
    assert.equal(s.remaining('login-ip', '198.51.100.1'), 97);
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: 'carol@example.com' }), 9);
  });

  it('decides the shed before the account is looked up, reserves nothing for it, and holds its busy until the bound', async (t) => {
    const s = await setup(t);
    const filling = await fill(s);
    assert.deepEqual(s.accounts.lookups, ['runner@example.com', 'first@example.com', 'second@example.com']);

    const shed = s.attempt('203.0.113.9', { email: 'dave@example.com' });
    assert.equal(await settled(shed), false, 'held, not answered at once');
    assert.equal(s.accounts.lookups.includes('dave@example.com'), false, 'never looked up');
    assert.equal(s.remaining('login-ip', '203.0.113.9'), 100, 'nothing reserved');
    assert.equal(s.remaining('login-account', '203.0.113.9', { email: 'dave@example.com' }), 10);

    s.clock.advance(100);
    const outcome = await shed;
    assert.equal(outcome.kind, 'busy');
    assert.ok(outcome.kind === 'busy' && outcome.retryAfter >= 1);
    // The gate sheds, so it asks for work: the busy answer carries a challenge for the email.
    const bits = s.login.gate.askedBits();
    assert.ok(bits > 0);
    assert.equal(outcome.kind === 'busy' && outcome.work?.bits, bits);
    assert.match(outcome.kind === 'busy' ? String(outcome.work?.challenge) : '', /^w2\./);
    await s.drain(filling);
  });

  it('gives back what it reserved when it is shed at its deadline: no failure, no lock, busy', async (t) => {
    const s = await setup(t, { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m' });
    const running = s.attempt('192.0.2.1', { email: 'runner@example.com' });
    await s.hasher.untilHeld(1);
    const waiting = s.attempt('192.0.2.2');
    await until(() => s.remaining('login-ip', '192.0.2.2') === 99, 'the waiting attempt’s reservation');
    assert.equal(s.remaining('login-account', '192.0.2.2', { email: ALICE }), 0, 'reserved while it waits');

    s.clock.advance(100); // the waiting attempt is past its bound: shed at the gate's next event
    s.hasher.releaseNext(50);
    assert.deepEqual(await running, { kind: 'invalid' });
    const outcome = await waiting;
    assert.equal(outcome.kind, 'busy');
    assert.equal(s.remaining('login-ip', '192.0.2.2'), 100, 'its units given back');
    assert.equal(s.remaining('login-account', '192.0.2.2', { email: ALICE }), 1);
    assert.deepEqual(
      s.events.filter((event) => event.email === ALICE),
      [],
      'no lock of the account it named',
    );
    assert.deepEqual(s.hasher.started, [WRONG], 'no check ran for it');
  });

  it('is refused, not failed, by a locked account: the control that refused, nothing kept, no check, no new lock', async (t) => {
    const s = await setup(t, { RATE_LIMIT_LOGIN_ACCOUNT: '2/15m' });
    await s.drain([s.attempt('198.51.100.1'), s.attempt('198.51.100.2')]);
    assert.deepEqual(
      s.events.map((event) => `${event.type} ${event.control}`).sort(),
      // Each failure is in the account's own events (docs/rules.md#accounts); the lock once.
      ['lock-started login-account', 'sign-in-failed password', 'sign-in-failed password'],
    );
    const checks = s.hasher.started.length;

    const outcome = await s.attempt('198.51.100.3', { password: PASSWORD });
    assert.equal(outcome.kind, 'refused');
    assert.ok(outcome.kind === 'refused');
    assert.equal(outcome.refusal.bound.control.name, 'login-account');
    assert.equal(outcome.refusal.bound.control.code, 'LOGIN_RATE_LIMIT');
    assert.ok(outcome.refusal.decision.resetMs > 0, 'a wait to write as Retry-After');
    assert.equal(s.remaining('login-ip', '198.51.100.3'), 100, 'the address’s unit given back');
    assert.equal(s.hasher.started.length, checks, 'no check ran');
    assert.equal(s.events.length, 3, 'a lock is recorded once, when it starts; a refusal is no failure');
    assert.deepEqual(s.login.gate.state().queued, { known: 0, shared: 0 }, 'its place left');
    assert.equal(s.login.gate.state().running, 0);
  });

  it('holds its slot only for its checks: freed before the failure is settled, and before a new hash is stored', async (t) => {
    const s = await setup(t, { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m' });
    // A failure that fills the budget starts a lock while it is settled: the slot is free by then.
    const runningWhenLocked: number[] = [];
    s.onEvent((event) => {
      if (event.type === 'lock-started') runningWhenLocked.push(s.login.gate.state().running);
    });
    await s.drain([s.attempt('198.51.100.1')]);
    assert.deepEqual(runningWhenLocked, [0]);

    // A hash made at another cost is redone on the same slot, and stored once the slot is free.
    const bob = 'bob@example.com';
    s.accounts.byEmail.set(bob, {
      user: { id: 2, email: bob, name: 'Bob', role: 'employee', mustChangePassword: false },
      passwordHash: await hashPassword(PASSWORD, TEST_PASSWORD_HASH_COST * 2),
      devicesValidAfter: null,
      disabledAt: null,
      passwordExpiresAt: null,
      deviceKnown: false,
    });
    const grants: string[] = [];
    s.login.gate.observe({ granted: (lane) => grants.push(lane) });
    let runningWhenStored: number | null = null;
    s.accounts.onStore = () => {
      runningWhenStored = s.login.gate.state().running;
    };
    const signIn = s.attempt('198.51.100.2', { email: bob, password: PASSWORD });
    await s.hasher.untilHeld(1);
    s.hasher.releaseNext();
    await s.hasher.untilHeld(1); // the rehash, held like a check
    assert.equal(s.login.gate.state().running, 1, 'on the same slot');
    s.hasher.releaseNext();
    assert.equal((await signIn).kind, 'signed-in');
    assert.deepEqual(grants, ['shared'], 'one slot for both');
    assert.equal(runningWhenStored, 0);
    assert.equal(s.accounts.stored.length, 1);
  });

  it('puts a known device in its own lane, looked up first, counted by its device alone', async (t) => {
    const s = await setup(t);
    const cookie = s.devices.issue(1);
    const lanes: string[] = [];
    s.login.gate.observe({ granted: (lane) => lanes.push(lane) });
    const outcome = s.attempt('198.51.100.1', { deviceCookie: cookie.value });
    await s.hasher.untilHeld(1);
    assert.deepEqual(s.accounts.lookups, [ALICE], 'once, before the gate');
    s.hasher.releaseNext();
    assert.deepEqual(await outcome, { kind: 'invalid' });
    assert.deepEqual(lanes, ['known']);
    assert.equal(s.remaining('login-device', '198.51.100.1', { deviceId: cookie.claim.deviceId }), 9);
    assert.equal(s.remaining('login-ip', '198.51.100.1'), 100);
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 10);

    // Another account's cookie makes no known device: the shared lane, by address and account.
    const carols = s.devices.issue(3);
    const shared = s.attempt('198.51.100.2', { deviceCookie: carols.value });
    await s.hasher.untilHeld(1);
    s.hasher.releaseNext();
    assert.deepEqual(await shared, { kind: 'invalid' });
    assert.deepEqual(lanes, ['known', 'shared']);
    assert.equal(s.remaining('login-ip', '198.51.100.2'), 99);
  });

  it('refuses a known device over its account’s backlog under the device’s control, held like a shed, before any budget', async (t) => {
    const s = await setup(t);
    const cookie = s.devices.issue(1);
    const known = (address: string) => s.attempt(address, { deviceCookie: cookie.value });
    const backlog = [known('198.51.100.1')];
    await s.hasher.untilHeld(1);
    for (let i = 0; i < MAX_WAITING_PER_ACCOUNT; i++) backlog.push(known('198.51.100.1'));
    await until(() => s.login.gate.state().queued.known === MAX_WAITING_PER_ACCOUNT, 'the backlog waiting');
    const deviceLeft = () => s.remaining('login-device', '198.51.100.1', { deviceId: cookie.claim.deviceId });
    await until(() => deviceLeft() === 10 - 1 - MAX_WAITING_PER_ACCOUNT, 'the backlog’s reservations');

    const over = known('198.51.100.1');
    assert.equal(await settled(over), false, 'held, not answered at once');
    s.clock.advance(100);
    const outcome = await over;
    assert.equal(outcome.kind, 'refused');
    assert.ok(outcome.kind === 'refused');
    assert.equal(outcome.refusal.bound.control.name, 'login-device');
    assert.equal(outcome.refusal.decision.remaining, 0);
    assert.ok(outcome.refusal.decision.resetMs >= 1000);
    assert.equal(deviceLeft(), 10 - 1 - MAX_WAITING_PER_ACCOUNT, 'nothing reserved for it');
    await s.drain(backlog);
  });
});

describe('LoginFlow: the looks before the body and after it', () => {
  /** The control a look refuses with, or null (the memory store answers at once). */
  const refusedBy = (look: Verdict | null | Promise<Verdict | null>): string | null => {
    assert.ok(!(look instanceof Promise));
    return look?.bound.control.name ?? null;
  };

  it('refuses a locked address before the body, unless the request may be a known device of the password plan', async (t) => {
    const s = await setup(t, { RATE_LIMIT_LOGIN_IP: '1/15m' });
    const { password, passkey } = { password: s.login.password.flow, passkey: s.login.passkey.flow };
    const locked = callerAt('198.51.100.1');
    assert.equal(refusedBy(password.beforeBody(locked, undefined)), null, 'nothing locked yet');
    await s.drain([s.attempt('198.51.100.1', { email: 'nobody@example.com' })]);

    assert.equal(refusedBy(password.beforeBody(locked, undefined)), 'login-ip');
    assert.equal(s.remaining('login-ip', '198.51.100.1'), 0, 'a look spends nothing');
    const cookie = s.devices.issue(1).value;
    assert.equal(refusedBy(password.beforeBody(locked, cookie)), null, 'may be a known device');
    assert.equal(refusedBy(password.beforeBody(locked, 'd1.forged')), 'login-ip', 'a forged cookie is none');
    assert.equal(refusedBy(passkey.beforeBody(locked, cookie)), 'login-ip', 'a passkey has no known devices');
  });

  it('answers, once the body names the account, whichever of the address’s and the account’s refusals ends last', async (t) => {
    const s = await setup(t, { RATE_LIMIT_LOGIN_IP: '1/15m', RATE_LIMIT_LOGIN_ACCOUNT: '1/15m' });
    const flow = s.login.password.flow;
    await s.drain([s.attempt('198.51.100.1', { email: 'nobody@example.com' })]);
    s.clock.advance(60_000);
    await s.drain([s.attempt('198.51.100.2')]); // alice's account, a minute later: its lock ends last
    const address = flow.beforeBody(callerAt('198.51.100.1'), undefined);
    assert.ok(address && !(address instanceof Promise));

    const both = flow.afterBody(callerAt('198.51.100.1'), ALICE, undefined, address);
    assert.equal(refusedBy(both), 'login-account');
    assert.ok(both && !(both instanceof Promise) && both.decision.resetMs > address.decision.resetMs);
    assert.equal(
      refusedBy(flow.afterBody(callerAt('198.51.100.3'), ALICE, undefined, null)),
      'login-account',
    );
    assert.equal(
      flow.afterBody(callerAt('198.51.100.1'), 42, undefined, address),
      address,
      'no email: the address’s',
    );
    assert.equal(
      refusedBy(flow.afterBody(callerAt('198.51.100.3'), 'carol@example.com', undefined, null)),
      null,
    );
    const cookie = s.devices.issue(1).value;
    assert.equal(
      refusedBy(flow.afterBody(callerAt('198.51.100.3'), ALICE, cookie, null)),
      null,
      'may be a known device',
    );
  });
});

describe('attemptPasskeyLogin', () => {
  const rp = { origin: 'https://portal.example', rpId: 'portal.example' };
  const answer = (id: string) => ({ id }) as AuthenticationResponseJSON;

  async function withPasskey(t: TestContext, env: Record<string, string> = {}) {
    const s = await setup(t, env);
    const alice = (await s.accounts.findCredentials(ALICE))!;
    s.passkeys.byId.set('alices-key', {
      id: 7,
      credentialId: 'alices-key',
      publicKey: 'AAAA',
      counter: 1,
      transports: [],
      user: alice.user,
      userHandle: null,
      disabledAt: null,
    });
    const sign = (id: string, address = '198.51.100.1', relyingParty: typeof rp | null = rp) =>
      attemptPasskeyLogin(s.login.passkey, {
        response: answer(id),
        binding: `pre-session\0${address}`,
        relyingParty,
        caller: callerAt(address),
      });
    return { ...s, sign };
  }

  it('signs in without the gate: no check, no place in a lane; a failure counts against the account, a success leaves it', async (t) => {
    const s = await withPasskey(t);
    s.ceremonies.outcome = { ok: false, cloned: false };
    assert.deepEqual(await s.sign('alices-key'), { kind: 'invalid' });
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 9);
    s.ceremonies.outcome = { ok: true, counter: 2 };
    const outcome = await s.sign('alices-key');
    assert.equal(outcome.kind === 'signed-in' && outcome.user.email, ALICE);
    assert.equal(
      s.remaining('login-account', '198.51.100.1', { email: ALICE }),
      9,
      'no fresh budget for a guesser',
    );
    assert.equal(s.remaining('login-ip', '198.51.100.1'), 99);
    assert.deepEqual(s.hasher.started, [], 'no password check');
  });

  it('is never refused by the account’s budget, which others’ wrong passwords fill', async (t) => {
    const s = await withPasskey(t, { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m' });
    await s.drain([s.attempt('203.0.113.1')]);
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 0, 'locked for passwords');
    assert.equal((await s.sign('alices-key')).kind, 'signed-in');
  });

  it('takes the challenge first, and refuses a locked address before any verification, counting nothing', async (t) => {
    const s = await withPasskey(t, { RATE_LIMIT_LOGIN_IP: '1/15m' });
    s.ceremonies.outcome = { ok: false, cloned: false };
    assert.deepEqual(await s.sign('alices-key'), { kind: 'invalid' });
    assert.equal(s.ceremonies.verified, 1);

    const outcome = await s.sign('alices-key');
    assert.equal(outcome.kind, 'refused');
    assert.equal(outcome.kind === 'refused' && outcome.refusal.bound.control.name, 'login-ip');
    assert.equal(s.ceremonies.taken.length, 2, 'its challenge is spent all the same');
    assert.equal(s.ceremonies.verified, 1, 'never verified');
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 9, 'nothing more kept');
  });

  it('counts an unknown credential, or a challenge the service no longer holds, by address alone, as invalid', async (t) => {
    const s = await withPasskey(t);
    assert.deepEqual(await s.sign('nobodys-key'), { kind: 'invalid' });
    s.ceremonies.challengeHeld = false;
    assert.deepEqual(await s.sign('alices-key'), { kind: 'invalid' });
    assert.equal(s.ceremonies.verified, 0);
    assert.equal(s.remaining('login-ip', '198.51.100.1'), 98);
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 10);
  });

  it('records a cloned authenticator, and refuses a disabled account or a lost counter race after the same check', async (t) => {
    const s = await withPasskey(t);
    s.ceremonies.outcome = { ok: false, cloned: true };
    assert.deepEqual(await s.sign('alices-key', '198.51.100.4'), { kind: 'invalid' });
    assert.deepEqual(s.events, [
      { type: 'passkey-counter-refused', control: 'passkey', email: ALICE, address: '198.51.100.4' },
      // A failure against an existing account is in its own events (docs/rules.md#accounts).
      { type: 'sign-in-failed', control: 'passkey', email: ALICE, address: '198.51.100.4' },
    ]);
    s.ceremonies.outcome = { ok: true, counter: 2 };
    s.passkeys.recordUseAnswer = false;
    assert.deepEqual(await s.sign('alices-key'), { kind: 'invalid' });
    s.passkeys.recordUseAnswer = true;
    const stored = s.passkeys.byId.get('alices-key')!;
    s.passkeys.byId.set('alices-key', { ...stored, disabledAt: 1 });
    assert.deepEqual(await s.sign('alices-key'), { kind: 'invalid' });
    assert.deepEqual(
      await s.sign('alices-key', '198.51.100.1', null),
      { kind: 'invalid' },
      'no relying party',
    );
    assert.equal(s.ceremonies.verified, 3, 'the one without a relying party was not verified');
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 6);
  });

  it('gives its units back when the check cannot run, and lets the failure through', async (t) => {
    const s = await withPasskey(t);
    s.passkeys.recordUseAnswer = new Error('the database is away');
    await assert.rejects(s.sign('alices-key'), /the database is away/);
    assert.equal(s.remaining('login-ip', '198.51.100.1'), 100);
    assert.equal(s.remaining('login-account', '198.51.100.1', { email: ALICE }), 10);
  });
});
