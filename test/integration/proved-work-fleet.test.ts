// docs/rules.md#proved-work on a fleet: a solved challenge works once on any instance.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { leadingZeroBits, workMessage } from '../../src/login/proved-work.ts';
import { WorkChallenges } from '../../src/login/work-challenges.ts';
import {
  createTestApp,
  DEMO_PASSWORD,
  TEST_SESSION_SECRET,
  type TestApp,
  type TestClient,
} from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { FLOOD, floodOfOneBitSolutions, solveBetween } from '../helpers/proved-work.ts';
import { openRedisStore, uniquePrefix } from '../helpers/redis.ts';
import { REDIS_URL, skipUnless } from '../helpers/services.ts';

const skip = await skipUnless('redis');
after(closeTestDatabases);

const CAROL = 'carol@example.com';

async function loginWith(client: TestClient, work: { challenge: string; nonce: string }) {
  await client.fetchCsrf();
  return client.request({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email: CAROL, password: DEMO_PASSWORD, work },
  });
}

const reusedOn = async ({ app }: TestApp) =>
  /^login_work_refused_total\{reason="reused"\} (\d+)$/m.exec(await app.metrics.metrics())?.[1];

describe('proved work on two instances sharing Redis', { skip }, () => {
  it('counts a solution on the first instance that sees it, and as no work on the other', async (t) => {
    const env = { REDIS_URL, REDIS_KEY_PREFIX: uniquePrefix(), RATE_LIMIT_STORE_FAILURE: 'closed' };
    const a = await createTestApp({ env, clock: new ManualClock() });
    t.after(a.close);
    const b = await createTestApp({ env, clock: new ManualClock() });
    t.after(b.close);
    // Instance A issued it (a LOGIN_BUSY under pressure, in production); both share SESSION_SECRET.
    const challenge = a.app.services.login.challenges.issue(CAROL);
    let nonce = 0;
    while (
      leadingZeroBits(
        createHash('sha256')
          .update(workMessage(challenge, String(nonce)))
          .digest(),
      ) < 4
    )
      nonce++;
    const work = { challenge, nonce: String(nonce) };
    assert.equal((await loginWith(a.client(), work)).statusCode, 200);
    assert.equal(await reusedOn(a), '0');
    // On B, the same solution is no work: the sign-in still succeeds (no pressure), nothing fails.
    assert.equal((await loginWith(b.client(), work)).statusCode, 200);
    assert.equal(await reusedOn(b), '1');
    assert.equal((await loginWith(a.client(), work)).statusCode, 200);
    assert.equal(await reusedOn(a), '1');
  });

  it('credits an honest solution after more one-bit solutions than the record ever held; the record stays small', async (t) => {
    const prefix = uniquePrefix();
    const store = await openRedisStore({ prefix });
    t.after(() => store.close());
    const challenges = new WorkChallenges({
      secret: TEST_SESSION_SECRET,
      clock: new ManualClock(),
      claims: store,
    });
    await floodOfOneBitSolutions(challenges, FLOOD);
    const challenge = challenges.issue(CAROL);
    const nonce = solveBetween(challenge, 8, 256);
    assert.ok((await challenges.prove(CAROL, { challenge, nonce }, 1)) >= 8, 'her solution is credited');
    // One bit per challenge issued, in a key per series: not a key per solution received.
    const keys = await store.client.keys(`${prefix}{claim:*`);
    assert.ok(keys.length <= 2, `${keys.length} keys hold the claims`);
    let bytes = 0;
    for (const key of keys) bytes += Number(await store.client.call('MEMORY', 'USAGE', key));
    assert.ok(bytes < 64 * 1024, `the claims take ${bytes} bytes`);
    await store.client.del(...keys);
  });
});
