// docs/rules.md#proved-work over HTTP: the challenge, the solution, the lane served by work.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { ApiClient, MemoryCookieJar, type WorkAsked } from '../../src/client/index.ts';
import { leadingZeroBits, WORK_CHALLENGE_TTL_MS, workMessage } from '../../src/login/proved-work.ts';
import { DEMO_PASSWORD, type Response, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import {
  drain,
  fill,
  type GateApp,
  gateApp,
  measureOneCheck,
  shedLogins,
  until,
} from '../helpers/gate-app.ts';
import { assertError } from '../helpers/http.ts';

after(closeTestDatabases);

const BOB = 'bob@example.com';
const CAROL = 'carol@example.com';
const WRONG = 'not-the-password';

interface Work {
  readonly challenge: string;
  readonly nonce: string;
}

/** The first nonce whose hash starts with at least `bits` zero bits (the test's own solver, node:crypto). */
function solve({ challenge, bits }: WorkAsked): Work {
  for (let n = 0; ; n++) {
    const nonce = n.toString(36);
    if (leadingZeroBits(createHash('sha256').update(workMessage(challenge, nonce)).digest()) >= bits)
      return { challenge, nonce };
  }
}

/** A login whose body carries `work` (any shape: the schema is what is tested). */
async function loginWith(
  client: TestClient,
  email: string,
  password: string,
  work: unknown,
): Promise<Response> {
  if (!client.csrfToken) await client.fetchCsrf();
  return client.request({ method: 'POST', url: '/api/auth/login', payload: { email, password, work } });
}

/** The challenge a LOGIN_BUSY carries, checked. */
function workOf(response: Response): WorkAsked {
  const body = assertError(response, 503, 'LOGIN_BUSY');
  const work = body.work as WorkAsked;
  assert.equal(typeof work?.challenge, 'string');
  assert.ok(Number.isInteger(work.bits) && work.bits >= 1, `bits ${work.bits}`);
  return work;
}

/** A gate with one check running and two waiting (checks of 50 ms, a bound of 100 ms), and a shed that started the pressure. */
async function underPressure(app: GateApp) {
  await measureOneCheck(app);
  const answers = await fill(app, 2);
  const [first] = await shedLogins(app, [() => app.client().login(CAROL, DEMO_PASSWORD)]);
  return { answers, asked: workOf(first!) };
}

const metric = async (app: GateApp, line: RegExp) => {
  const text = await app.app.metrics.metrics();
  return line.exec(text)?.[1];
};

describe('POST /api/auth/login with proved work (docs/rules.md#proved-work)', () => {
  it('asks for no work without pressure, and signs in as before whatever work is sent', async (t) => {
    const app = await gateApp(t);
    app.hasher.letThrough();
    const wrong = await app.client().login(BOB, WRONG);
    assert.equal(assertError(wrong, 401, 'INVALID_CREDENTIALS').work, undefined);
    const forged = await loginWith(app.client(), BOB, DEMO_PASSWORD, { challenge: 'w1.x.y.z', nonce: '1' });
    assert.equal(forged.statusCode, 200, 'a forged solution is no work, never a failed login');
    assert.equal(await metric(app, /^login_work_bits_asked (\d+)$/m), '0');
  });

  it('carries a challenge in LOGIN_BUSY under pressure, and serves its solution before every attempt that proved less', async (t) => {
    const app = await gateApp(t);
    const { answers, asked } = await underPressure(app);
    assert.equal(asked.bits, 1, 'one bit more than the least work admitted lately (none)');
    assert.equal(await metric(app, /^login_work_bits_asked (\d+)$/m), '1');
    // The line is full for attempts without work; a solved challenge is admitted at its head and
    // the newest attempt without work makes room for it (answered LOGIN_BUSY at once, with a challenge).
    const owner = loginWith(app.client(), CAROL, DEMO_PASSWORD, solve(asked));
    const displaced = await answers[2]!;
    workOf(displaced);
    app.hasher.releaseNext(); // the running check ends: carol's runs next, ahead of the older waiting one
    await app.hasher.untilHeld(1);
    assert.equal(app.hasher.held[0]!.password, DEMO_PASSWORD);
    app.hasher.releaseNext();
    assert.equal((await owner).statusCode, 200);
    await drain(app, [answers[0]!, answers[1]!]);
    const admitted = await metric(app, /^login_work_bits_count\{outcome="admitted"\} (\d+)$/m);
    const admittedWithWork = await metric(
      app,
      /^login_work_bits_bucket\{le="0",outcome="admitted"\} (\d+)$/m,
    );
    assert.equal(Number(admitted) - Number(admittedWithWork), 1, 'one admitted attempt proved work');
    assert.equal(await metric(app, /^login_gate_shed_total\{reason="displaced"\} (\d+)$/m), '1');
  });

  it('counts a forged, foreign, reused or expired solution as no work: shed like none, never a failure or a 5xx', async (t) => {
    const app = await gateApp(t);
    const { answers, asked } = await underPressure(app);
    const solved = solve(asked);
    // Used once: admitted at the head of the line, the newest attempt without work makes room.
    const used = loginWith(app.client(), CAROL, WRONG, solved);
    workOf(await answers[2]!);
    const [tampered, foreign, reused] = await shedLogins(app, [
      () => loginWith(app.client(), CAROL, DEMO_PASSWORD, { ...solved, challenge: `${solved.challenge}x` }),
      () => loginWith(app.client(), BOB, DEMO_PASSWORD, solved), // issued for carol
      () => loginWith(app.client(), CAROL, DEMO_PASSWORD, solved),
    ]);
    for (const response of [tampered!, foreign!, reused!]) workOf(response);
    const refused = (reason: string) =>
      metric(app, new RegExp(`^login_work_refused_total\\{reason="${reason}"\\} (\\d+)$`, 'm'));
    assert.equal(await refused('forged'), '2');
    assert.equal(await refused('reused'), '1');
    await drain(app, [...answers, used], 0);
  });

  it('counts a solution sent after its two minutes as no work', async (t) => {
    const app = await gateApp(t);
    const { answers, asked } = await underPressure(app);
    const stale = solve(asked);
    await drain(app, answers, 0);
    app.clock.advance(WORK_CHALLENGE_TTL_MS);
    const refill = await fill(app, 2);
    const [expired] = await shedLogins(app, [() => loginWith(app.client(), CAROL, DEMO_PASSWORD, stale)]);
    workOf(expired!);
    assert.equal(await metric(app, /^login_work_refused_total\{reason="expired"\} (\d+)$/m), '1');
    await drain(app, refill, 0);
  });

  it('answers 400 for a solution of the wrong shape, before the gate and without a check', async (t) => {
    const app = await gateApp(t);
    const client = app.client();
    for (const work of [
      { challenge: 'w1.a.b.c', nonce: 'n'.repeat(33) },
      { challenge: 'w1.a.b.c' },
      { challenge: 'w1.a.b.c', nonce: '' },
      { challenge: 'w1.a.b.c', nonce: 7 },
      { challenge: 'w1.a.b.c', nonce: '1', bits: 20 },
      'w1.a.b.c:1',
    ]) {
      const response = await loginWith(client, BOB, DEMO_PASSWORD, work);
      assertError(response, 400, 'VALIDATION_ERROR');
    }
    assert.deepEqual(app.hasher.started, []);
    assert.deepEqual(app.app.services.login.gate.state().queued, { known: 0, shared: 0 });
  });

  it('the typed client solves a LOGIN_BUSY challenge by itself and signs in with it', async (t) => {
    const app = await gateApp(t);
    await measureOneCheck(app);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.app.server.address() as AddressInfo;
    const answers = await fill(app, 2);
    const efforts: WorkAsked[] = [];
    const client = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, cookieJar: new MemoryCookieJar() });
    const signIn = client.login(CAROL, DEMO_PASSWORD, { onWork: (asked) => efforts.push(asked) });
    // Its first attempt is shed and held for the bound; then it solves and comes back at the head.
    await until(() => app.app.services.login.gate.state().held === 1, 'the first attempt held');
    app.clock.advance(100);
    const displaced = await answers[2]!;
    workOf(displaced);
    app.hasher.releaseNext();
    await app.hasher.untilHeld(1);
    assert.equal(app.hasher.held[0]!.password, DEMO_PASSWORD);
    app.hasher.releaseNext();
    assert.equal((await signIn).email, CAROL);
    assert.deepEqual(
      efforts.map((e) => e.bits),
      [1],
    );
    await drain(app, [answers[0]!, answers[1]!]);
  });
});
