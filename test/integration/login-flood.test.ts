// docs/rules.md#the-login-gate with real argon2id over real sockets: a flood, and the owner gets in.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { DEVICE_COOKIE } from '../../src/auth/devices.ts';
import { argon2Hasher, type PasswordHasher } from '../../src/auth/passwords.ts';
import { ManualClock, systemClock } from '../../src/clock.ts';
import { createTestApp, DEMO_PASSWORD } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

const IN_FLIGHT = 200;
const FLOOD_MS = 10_000;
/** Alice's sign-ins under the flood, at least. */
const OWNER_ATTEMPTS = 5;
const ALICE = 'alice@example.com';

/** The real time: waits and check durations here are what the gate measures on this machine. */
class WallClock extends ManualClock {
  override now(): number {
    return systemClock.now();
  }
  override sleep(ms: number): Promise<void> {
    return systemClock.sleep(ms);
  }
}

/** The real argon2id, noting in `order` whose check starts: the owner's (her password) or the flood's. */
class OrderHasher implements PasswordHasher {
  readonly order: ('flood' | 'owner' | 'owner-sent')[] = [];
  verify(password: string, stored: string): Promise<boolean> {
    this.order.push(password === DEMO_PASSWORD ? 'owner' : 'flood');
    return argon2Hasher.verify(password, stored);
  }
  hash(password: string, memoryKiB: number): Promise<string> {
    return argon2Hasher.hash(password, memoryKiB);
  }
}

/** For each owner sign-in: the flood's checks that started between her request's sending and her check. */
function overtakenBy(order: readonly string[]): number[] {
  const counts: number[] = [];
  let waiting: number | null = null;
  for (const entry of order) {
    if (entry === 'owner-sent') waiting = 0;
    else if (entry === 'flood' && waiting !== null) waiting++;
    else if (entry === 'owner' && waiting !== null) {
      counts.push(waiting);
      waiting = null;
    }
  }
  return counts;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('a credential-stuffing flood against the real argon2id', () => {
  it('lets the known-device owner in every time, overtaken by a few checks at most, while it sheds the flood', {
    timeout: 120_000,
  }, async (t) => {
    const hasher = new OrderHasher();
    const test = await createTestApp({
      hasher,
      clock: new WallClock(),
      env: {
        PASSWORD_HASH_COST: '19456',
        LOGIN_HASH_CONCURRENCY: '2',
        TRUST_PROXY: '127.0.0.1',
      },
    });
    t.after(test.close);
    await test.database.db.query('UPDATE users SET devices_valid_after = NULL');
    await test.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = test.app.server.address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    t.after(() => agent.destroy());

    const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      new Promise<Answer>((resolve, reject) => {
        const request = http.request(
          { host: '127.0.0.1', port, method, path, headers, agent },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              text += chunk;
            });
            response.on('end', () =>
              resolve({ status: response.statusCode!, headers: response.headers, body: text }),
            );
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    const cookiesOf = (answer: Answer) =>
      (answer.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]!).filter((c) => !c.endsWith('='));
    const csrf = async (headers: Record<string, string> = {}) => {
      const answer = await send('GET', '/api/csrf-token', headers);
      return { token: JSON.parse(answer.body).csrfToken as string, cookies: cookiesOf(answer) };
    };
    const login = (email: string, password: string, token: string, cookies: string[], extra = {}) => {
      const body = JSON.stringify({ email, password });
      return send(
        'POST',
        '/api/auth/login',
        { 'content-type': 'application/json', 'x-csrf-token': token, cookie: cookies.join('; '), ...extra },
        body,
      );
    };

    // Alice signs in once: her browser is a known device from now on.
    const first = await csrf();
    const signedIn = await login(ALICE, DEMO_PASSWORD, first.token, first.cookies);
    assert.equal(signedIn.status, 200, signedIn.body);
    let device = cookiesOf(signedIn).find((c) => c.startsWith(`${DEVICE_COOKIE}=`))!;
    assert.ok(device);

    const attack: Record<string, number> = {};
    const badRetryAfter: string[] = [];
    let next = 0;
    const end = Date.now() + FLOOD_MS;
    let ownerDone = false;
    // The flood lasts its time, and at least until alice has tried her sign-ins under it.
    const flooding = () => Date.now() < end || !ownerDone;
    const attacker = async () => {
      const { token, cookies } = await csrf();
      while (flooding()) {
        const n = next++;
        const address = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
        const answer = await login(`flood${n}@example.net`, `guess-${n}`, token, cookies, {
          'x-forwarded-for': address,
        });
        const code = JSON.parse(answer.body).code as string;
        attack[`${answer.status} ${code}`] = (attack[`${answer.status} ${code}`] ?? 0) + 1;
        if (answer.status === 503 && !(Number(answer.headers['retry-after']) >= 1))
          badRetryAfter.push(String(answer.headers['retry-after']));
      }
    };
    const owner: { status: number; ms: number }[] = [];
    const alice = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1000)); // the flood is at full strength by then
      while (Date.now() < end || owner.length < OWNER_ATTEMPTS) {
        const { token, cookies } = await csrf({ cookie: device });
        const started = performance.now();
        hasher.order.push('owner-sent');
        const answer = await login(ALICE, DEMO_PASSWORD, token, [...cookies, device]);
        // Her browser keeps the cookie each sign-in renews, as a browser does.
        device = cookiesOf(answer).find((c) => c.startsWith(`${DEVICE_COOKIE}=`)) ?? device;
        owner.push({ status: answer.status, ms: performance.now() - started });
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      ownerDone = true;
    };
    await Promise.all([...Array.from({ length: IN_FLIGHT }, attacker), alice()]);

    const { checkMs, concurrency } = test.app.services.login.gate.state();
    const statuses = Object.keys(attack).sort();
    t.diagnostic(
      `attack ${JSON.stringify(attack)}; owner ${JSON.stringify(owner.map((o) => Math.round(o.ms)))} ms; check ${checkMs.toFixed(1)} ms`,
    );
    assert.deepEqual(
      statuses.filter((s) => s !== '401 INVALID_CREDENTIALS' && s !== '503 LOGIN_BUSY'),
      [],
      'the flood gets 401 or 503 LOGIN_BUSY, nothing else',
    );
    assert.ok((attack['503 LOGIN_BUSY'] ?? 0) > 0, 'the flood was shed');
    assert.deepEqual(badRetryAfter, [], 'every 503 says when to come back');
    assert.deepEqual(
      owner.map((o) => o.status),
      owner.map(() => 200),
      'alice gets in every time',
    );
    // Her wait is counted in checks, not in milliseconds (which a loaded machine stretches): the
    // checks running when her request came (at most `concurrency`), and one more on each thread
    // whose slot a flood attempt took while her request was still on its way in. Without the gate's
    // known-device lane she would queue behind the flood, or be shed with it.
    const overtaken = overtakenBy(hasher.order);
    t.diagnostic(`flood checks started between alice's sending and her check: ${JSON.stringify(overtaken)}`);
    assert.equal(overtaken.length, owner.length, 'each of her sign-ins was checked');
    const bound = 2 * concurrency + 2;
    assert.ok(
      Math.max(...overtaken) <= bound,
      `alice was overtaken by ${Math.max(...overtaken)} checks, over ${bound}`,
    );
  });
});
