// docs/rules.md#the-login-gate over HTTP, with checks the test holds, on a hand-moved clock.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MAX_WAITING_PER_ACCOUNT } from '../../src/login/login-gate.ts';
import { DEMO_PASSWORD, type Response, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import {
  drain,
  fill,
  type GateApp,
  gateApp,
  knownBrowser,
  loginLater,
  measureOneCheck,
  shedLogins,
  until,
  untilQueued,
} from '../helpers/gate-app.ts';
import { assertError } from '../helpers/http.ts';

after(closeTestDatabases);

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const CAROL = 'carol@example.com';
const WRONG = 'not-the-password';

describe('POST /api/auth/login under a flood (the hashing gate)', () => {
  it('answers 503 LOGIN_BUSY with Retry-After and no-store, before any hash, once the expected wait passes the bound', async (t) => {
    const app = await gateApp(t);
    await measureOneCheck(app);
    // One running and two waiting: a newcomer would wait 3 × 50 ms > 100 ms.
    const answers = await fill(app, 2);
    const startedBefore = app.hasher.started.length;
    const [shed] = await shedLogins(app, [() => app.client().login(BOB, WRONG)]);
    const body = assertError(shed!, 503, 'LOGIN_BUSY');
    assert.equal(shed!.headers['retry-after'], '1');
    assert.equal(body.retryAfter, 1);
    assert.equal(shed!.headers['cache-control'], 'no-store');
    assert.equal(app.hasher.started.length, startedBefore, 'no hash was started for it');
    assert.equal(shed!.headers['set-cookie'], undefined, 'no session, no device cookie');
    const statuses = (await drain(app, answers, 0)).map((r) => r.statusCode);
    assert.deepEqual(statuses, [401, 401, 401], 'the admitted attempts were all checked');
  });

  it('never makes a shed depend on whether the account exists', async (t) => {
    const app = await gateApp(t);
    await measureOneCheck(app);
    const answers = await fill(app, 2);
    const [existing, missing, owner] = (await shedLogins(app, [
      () => app.client().login(BOB, WRONG),
      () => app.client().login('no-such-user@example.com', WRONG),
      () => app.client().login(CAROL, DEMO_PASSWORD),
    ])) as [Response, Response, Response];
    for (const response of [existing, missing, owner]) assertError(response, 503, 'LOGIN_BUSY');
    // Each challenge is new (a random id, bound to its email): its shape is the same for all.
    const shape = (r: Response) => ({
      body: { ...r.json(), work: { ...r.json().work, challenge: typeof r.json().work.challenge } },
      headers: Object.keys(r.headers)
        .filter((name) => !['date', 'set-cookie', 'x-request-id'].includes(name))
        .sort()
        .map((name) => `${name}: ${r.headers[name]}`),
    });
    assert.deepEqual(shape(missing), shape(existing));
    assert.deepEqual(shape(owner), shape(existing));
    await drain(app, answers);
    // And with room in the gate, both are admitted alike: each one check, each 401.
    const twoAnswers = [
      app.client().login(BOB, WRONG),
      app.client().login('no-such-user@example.com', WRONG),
    ];
    const checked = await drain(app, twoAnswers);
    assert.deepEqual(
      checked.map((r) => [r.statusCode, r.json().code]),
      [
        [401, 'INVALID_CREDENTIALS'],
        [401, 'INVALID_CREDENTIALS'],
      ],
    );
  });

  it('spends no login budget on a shed attempt and starts no lock', async (t) => {
    const app = await gateApp(t, { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m', RATE_LIMIT_LOGIN_IP: '1/15m' });
    await measureOneCheck(app);
    const answers = await fill(app, 2);
    const caller = app.client();
    await caller.fetchCsrf();
    const sheds = await shedLogins(
      app,
      [1, 2, 3].map(() => () => caller.login(BOB, WRONG)),
    );
    for (const shed of sheds) assertError(shed, 503, 'LOGIN_BUSY');
    await drain(app, answers);
    // Had any shed attempt counted, bob's account (1 failure per 15 min) or this address would be locked now.
    const budgets = (await caller.get('/api/rate-limits')).json<{
      controls: { control: string; remaining: number }[];
    }>();
    const remaining = Object.fromEntries(budgets.controls.map((c) => [c.control, c.remaining]));
    assert.equal(remaining['login-ip'], 1, 'the address has its whole failure budget');
    const retry = caller.login(BOB, DEMO_PASSWORD);
    await app.hasher.untilHeld(1);
    app.hasher.releaseNext();
    assert.equal((await retry).statusCode, 200, 'bob is not locked');
    // (The filler attempts were real failures on budgets of one: each of them started its locks.)
    await app.app.services.securityEvents.flush();
    const locks = await app.database.db.query<{ type: string }>(
      "SELECT type FROM security_events WHERE type = 'lock-started' AND (email = $1 OR address = $2)",
      [BOB, caller.remoteAddress],
    );
    assert.deepEqual(locks, [], 'no lock on bob’s account or the caller’s address');
  });

  it('gives back what an attempt reserved when it is shed after waiting its bound', async (t) => {
    const app = await gateApp(t, { RATE_LIMIT_LOGIN_ACCOUNT: '1/15m', RATE_LIMIT_LOGIN_IP: '1/15m' });
    const running = loginLater(app.client(), 'runner@example.com', WRONG);
    await app.hasher.untilHeld(1);
    // Nothing measured yet: bob's attempt is admitted, reserves its units, and waits.
    const caller = app.client();
    const waiting = caller.login(BOB, WRONG);
    await untilQueued(app, 1);
    await new Promise((resolve) => setTimeout(resolve, 20)); // its reservation is made while it waits
    app.clock.advance(150); // past LOGIN_QUEUE_MAX_WAIT (100 ms)
    // The next event at the gate (another attempt arriving) sheds it.
    const next = loginLater(app.client(), 'other@example.com', WRONG);
    const shed = await waiting;
    const body = assertError(shed, 503, 'LOGIN_BUSY');
    assert.ok(Number(shed.headers['retry-after']) >= 1);
    assert.equal(body.retryAfter, Number(shed.headers['retry-after']));
    await drain(app, [running, next]);
    // Its units came back: the address and the account (1 per 15 min each) still admit a check.
    const again = caller.login(BOB, DEMO_PASSWORD);
    await app.hasher.untilHeld(1);
    app.hasher.releaseNext();
    assert.equal((await again).statusCode, 200);
  });

  it('serves a known device before every shared attempt that waits', async (t) => {
    const app = await gateApp(t, { LOGIN_QUEUE_MAX_WAIT: '10s' });
    const alice = await knownBrowser(app, ALICE);
    const answers = await fill(app, 3);
    const owner = alice.login(ALICE, DEMO_PASSWORD);
    await untilQueued(app, 3, 1);
    app.hasher.releaseNext(); // the running check ends
    await app.hasher.untilHeld(1);
    assert.equal(app.hasher.held[0]!.password, DEMO_PASSWORD, 'alice’s check runs next');
    app.hasher.releaseNext();
    assert.equal((await owner).statusCode, 200);
    await drain(app, answers);
  });

  it('never sheds a known device: it waits in its own lane while shared newcomers are turned away', async (t) => {
    const app = await gateApp(t);
    const alice = await knownBrowser(app, ALICE); // its check measured 50 ms
    const answers = await fill(app, 2);
    const [carol] = await shedLogins(app, [() => app.client().login(CAROL, DEMO_PASSWORD)]);
    assertError(carol!, 503, 'LOGIN_BUSY');
    const owner = alice.login(ALICE, DEMO_PASSWORD);
    await untilQueued(app, 2, 1);
    app.hasher.releaseNext(); // the running check ends: alice's runs next, ahead of the two waiting
    await app.hasher.untilHeld(1);
    assert.equal(app.hasher.held[0]!.password, DEMO_PASSWORD);
    const results = await drain(app, [owner, ...answers]);
    assert.equal(results[0]!.statusCode, 200);
  });

  it('takes known-device accounts in turn, one check per account at a time', async (t) => {
    const app = await gateApp(t, { LOGIN_HASH_CONCURRENCY: '2', LOGIN_QUEUE_MAX_WAIT: '10s' });
    const alices = [
      await knownBrowser(app, ALICE),
      await knownBrowser(app, ALICE),
      await knownBrowser(app, ALICE),
    ];
    const bob = await knownBrowser(app, BOB);
    // Alice's three devices at once: one check runs for her, the others wait though a slot is free.
    const passwords = ['a1', 'a2', 'a3'];
    const aliceAnswers = alices.map((browser, i) => loginLater(browser, ALICE, passwords[i]!));
    await app.hasher.untilHeld(1);
    await untilQueued(app, 0, 2);
    assert.equal(app.hasher.held.length, 1);
    // The free slot goes to a shared attempt: the known lane has nobody it may serve.
    const shared = loginLater(app.client(), 'someone@example.com', 's1');
    await app.hasher.untilHeld(2);
    assert.deepEqual(
      app.hasher.held.map((c) => c.password),
      ['a1', 's1'],
    );
    // Bob's device arrives while alice's check runs: when it ends, bob's turn comes before her second.
    const bobAnswer = loginLater(bob, BOB, 'b1');
    await untilQueued(app, 0, 3);
    app.hasher.releaseNext(); // a1 ends: bob's turn; alice goes to the back of the accounts' line
    await app.hasher.untilHeld(2);
    app.hasher.releaseNext(); // s1 ends: alice's second (a2)
    await app.hasher.untilHeld(2);
    await drain(app, [...aliceAnswers, shared, bobAnswer]);
    const order = app.hasher.started.filter((p) => ['a1', 'a2', 'a3', 'b1', 's1'].includes(p));
    assert.deepEqual(order, ['a1', 's1', 'b1', 'a2', 'a3']);
  });

  it('sends an account to the back of the turns after each of its checks', async (t) => {
    const app = await gateApp(t, { LOGIN_HASH_CONCURRENCY: '1', LOGIN_QUEUE_MAX_WAIT: '10s' });
    const alices = [await knownBrowser(app, ALICE), await knownBrowser(app, ALICE)];
    const bob = await knownBrowser(app, BOB);
    const carol = await knownBrowser(app, CAROL);
    const answers = [loginLater(app.client(), 'someone@example.com', 's0')];
    await app.hasher.untilHeld(1);
    // Behind s0: alice twice, then bob, then carol, each queued before the next arrives.
    answers.push(loginLater(alices[0]!, ALICE, 'a1'));
    await untilQueued(app, 0, 1);
    answers.push(loginLater(alices[1]!, ALICE, 'a2'));
    await untilQueued(app, 0, 2);
    answers.push(loginLater(bob, BOB, 'b1'));
    await untilQueued(app, 0, 3);
    answers.push(loginLater(carol, CAROL, 'c1'));
    await untilQueued(app, 0, 4);
    for (let i = 0; i < 4; i++) {
      app.hasher.releaseNext();
      await app.hasher.untilHeld(1);
    }
    await drain(app, answers);
    const order = app.hasher.started.filter((p) => ['s0', 'a1', 'a2', 'b1', 'c1'].includes(p));
    // Alice's first check sends her to the back: bob and carol, who waited, come before her second.
    assert.deepEqual(order, ['s0', 'a1', 'b1', 'c1', 'a2']);
  });

  it('keeps a new browser open on a one-slot gate while an insider’s backlog holds the slot', async (t) => {
    const app = await gateApp(t, { LOGIN_HASH_CONCURRENCY: '1', LOGIN_QUEUE_MAX_WAIT: '10s' });
    const bobs: TestClient[] = [];
    for (let i = 0; i <= MAX_WAITING_PER_ACCOUNT; i++) bobs.push(await knownBrowser(app, BOB));
    const answers = bobs.map((browser) => browser.login(BOB, DEMO_PASSWORD));
    await app.hasher.untilHeld(1);
    await untilQueued(app, 0, MAX_WAITING_PER_ACCOUNT);
    // Carol, from a new browser, waits for bob's running check only, not for his backlog.
    const carol = app.client().login(CAROL, DEMO_PASSWORD);
    await untilQueued(app, 1, MAX_WAITING_PER_ACCOUNT);
    app.hasher.releaseNext(); // bob's check ends: the slot is carol's, his backlog waits whole
    await app.hasher.untilHeld(1);
    await untilQueued(app, 0, MAX_WAITING_PER_ACCOUNT);
    app.hasher.releaseNext();
    assert.equal((await carol).statusCode, 200);
    const results = await drain(app, answers);
    assert.deepEqual(
      results.map((r) => r.statusCode),
      Array(1 + MAX_WAITING_PER_ACCOUNT).fill(200),
    );
  });

  it('keeps a new browser open while an insider keeps many sign-ins to his own account in flight', async (t) => {
    const app = await gateApp(t, { LOGIN_HASH_CONCURRENCY: '2' });
    const gate = app.app.services.login.gate;
    const inFlight = 2 * (1 + MAX_WAITING_PER_ACCOUNT);
    const bobs: TestClient[] = [];
    for (let i = 0; i < inFlight; i++) bobs.push(await knownBrowser(app, BOB)); // checks measured: 50 ms
    // Bob's own devices, all at once: one check runs, MAX_WAITING_PER_ACCOUNT wait behind it, the rest are refused.
    const startedBefore = app.hasher.started.length;
    const settled = new Map<number, Response>();
    const answers = bobs.map((browser, i) =>
      browser.login(BOB, DEMO_PASSWORD).then((response) => {
        settled.set(i, response);
        return response;
      }),
    );
    await untilQueued(app, 0, MAX_WAITING_PER_ACCOUNT);
    // The extra attempts' answers are held (as a shed's), so that an insider's loop costs nothing.
    const extra = inFlight - 1 - MAX_WAITING_PER_ACCOUNT;
    await until(() => gate.state().held === extra, 'the extra attempts held');
    assert.equal(settled.size, 0, 'none answered before the bound');
    app.clock.advance(100);
    await until(() => settled.size === extra, 'the extra attempts answered');
    const refusedFirst = [...settled.keys()][0]!;
    for (const refused of settled.values()) {
      const body = assertError(refused, 429, 'LOGIN_RATE_LIMIT');
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(body.retryAfter, 1);
      assert.equal(refused.headers['ratelimit-reset'], '1');
    }
    assert.equal(app.hasher.started.length, startedBefore + 1, 'no check for a refused attempt');
    // Carol, from a new browser: one slot runs bob's check, the other is hers; she is not shed.
    const carol = app.client().login(CAROL, DEMO_PASSWORD);
    await until(() => gate.state().running === 2 || gate.state().held === 1, 'carol admitted or shed');
    assert.equal(gate.state().held, 0, 'carol is not shed');
    await app.hasher.untilHeld(2);
    app.hasher.releaseNext(); // bob's check ends: his next one takes his slot
    await app.hasher.untilHeld(2);
    app.hasher.releaseNext(); // carol's
    assert.equal((await carol).statusCode, 200);
    const admitted = (await drain(app, answers)).filter((r) => r.statusCode !== 429);
    assert.deepEqual(
      admitted.map((r) => r.statusCode),
      Array(1 + MAX_WAITING_PER_ACCOUNT).fill(200),
    );
    // The refusals counted no failure and started no lock: the device budgets are whole.
    const refusedBrowser = bobs[refusedFirst]!; // its device cookie is still the one it was refused with
    const budgets = (await refusedBrowser.get('/api/rate-limits')).json<{
      controls: { control: string; limit: number; remaining: number }[];
    }>();
    const device = budgets.controls.find((c) => c.control === 'login-device')!;
    assert.equal(device.remaining, device.limit);
    await app.app.services.securityEvents.flush();
    // No lock and no failure (the insider's sign-ins that got through are in his own events).
    assert.deepEqual(
      await app.database.db.query(
        "SELECT type FROM security_events WHERE type NOT IN ('signed-in', 'signed-in-new-device')",
      ),
      [],
    );
  });

  it('decides everything cheap before the gate: a password over 1,024 characters is a 400', async (t) => {
    const app = await gateApp(t);
    const answers = await fill(app, 0);
    const before = app.hasher.started.length;
    const caller = app.client();
    await caller.fetchCsrf();
    const long = await caller.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: BOB, password: 'x'.repeat(1025) },
    });
    assertError(long, 400, 'VALIDATION_ERROR');
    const noToken = await caller.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: BOB, password: WRONG },
      csrf: false,
    });
    assertError(noToken, 403, 'CSRF_INVALID');
    assert.equal(app.hasher.started.length, before);
    assert.deepEqual(app.app.services.login.gate.state().queued, { known: 0, shared: 0 });
    await drain(app, answers);
  });
});

describe('GET /api/admin/login-pressure and the pressure events', () => {
  const pressureOf = async (admin: TestClient) => {
    const response = await admin.get('/api/admin/login-pressure');
    assert.equal(response.statusCode, 200, response.body);
    return response.json<{
      underPressure: boolean;
      since: string | null;
      shedAttempts: number;
      gate: { concurrency: number; running: number; queued: { known: number; shared: number } };
    }>();
  };
  const pressureEvents = async (app: GateApp) => {
    await app.app.services.securityEvents.flush();
    return (
      await app.database.db.query<{ type: string; control: string }>(
        "SELECT type, control FROM security_events WHERE type LIKE 'login-pressure-%' ORDER BY id",
      )
    ).map((row) => `${row.type} ${row.control}`);
  };

  it('starts one episode at the first shed, shows it to admins, and ends it after a minute without shedding', async (t) => {
    const app = await gateApp(t);
    const admin = await knownBrowser(app, 'admin@example.com'); // signed in; its check measured 50 ms
    const calm = await pressureOf(admin);
    assert.equal(calm.underPressure, false);
    assert.equal(calm.since, null);
    assert.equal(calm.gate.concurrency, 1);

    const answers = await fill(app, 2);
    const firstShedAt = app.clock.now();
    const sheds = await shedLogins(
      app,
      [0, 1, 2, 3, 4].map((i) => () => app.client().login(`x${i}@example.com`, WRONG)),
    );
    for (const shed of sheds) assertError(shed, 503, 'LOGIN_BUSY');
    const busy = await pressureOf(admin);
    assert.equal(busy.underPressure, true);
    assert.equal(busy.since, new Date(firstShedAt).toISOString());
    assert.equal(busy.shedAttempts, 5);
    assert.deepEqual(busy.gate.queued, { known: 0, shared: 2 });
    assert.equal(busy.gate.running, 1);
    assert.deepEqual(
      await pressureEvents(app),
      ['login-pressure-started login-gate'],
      'one event for five sheds',
    );

    await drain(app, answers);
    app.clock.advance(59_000);
    assert.equal((await pressureOf(admin)).underPressure, true, 'still within the quiet minute');
    app.clock.advance(1_000);
    assert.equal((await pressureOf(admin)).underPressure, false);
    assert.deepEqual(await pressureEvents(app), [
      'login-pressure-started login-gate',
      'login-pressure-ended login-gate',
    ]);
    const events = (await admin.get('/api/admin/security-events')).json<{ events: { type: string }[] }>();
    assert.deepEqual(
      events.events.slice(0, 2).map((e) => e.type),
      ['login-pressure-ended', 'login-pressure-started'],
    );
  });

  it('is for admins only', async (t) => {
    const app = await gateApp(t);
    assertError(await app.client().get('/api/admin/login-pressure'), 401, 'UNAUTHENTICATED');
    const employee = await knownBrowser(app, BOB);
    assertError(await employee.get('/api/admin/login-pressure'), 403, 'FORBIDDEN');
  });

  it('counts queues, waits, checks and sheds in /metrics', async (t) => {
    const app = await gateApp(t);
    await measureOneCheck(app);
    const answers = await fill(app, 2);
    const shed = app.client().login(BOB, WRONG);
    await until(() => app.app.services.login.gate.state().held === 1);
    const holding = await app.app.metrics.metrics();
    assert.match(holding, /^login_gate_held_answers 1$/m);
    app.clock.advance(100);
    assertError(await shed, 503, 'LOGIN_BUSY');
    const during = await app.app.metrics.metrics();
    assert.match(during, /^login_gate_held_answers 0$/m);
    assert.match(during, /^login_gate_queue_depth\{lane="shared"\} 2$/m);
    assert.match(during, /^login_gate_queue_depth\{lane="known"\} 0$/m);
    assert.match(during, /^login_gate_checks_running 1$/m);
    assert.match(during, /^login_gate_shed_total\{reason="expected-wait"\} 1$/m);
    await drain(app, answers, 0);
    const later = await app.app.metrics.metrics();
    assert.match(later, /^login_gate_checks_total\{lane="shared"\} 4$/m);
    assert.match(later, /^login_gate_wait_seconds_count\{lane="shared"\} 4$/m);
    assert.match(later, /^login_gate_queue_depth\{lane="shared"\} 0$/m);
  });
});
