// docs/rules.md#passkeys on a fleet: a challenge issued by one instance works once, on another.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { CSRF_COOKIE } from '../../src/http/plugins/csrf.ts';
import { localStack } from '../../src/rate-limit/stores/create-store.ts';
import { createTestApp, TestClient, testConfig } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { floodsNoChallengeOut, ownerWithPasskey, sendAssertion, signInOptions } from '../helpers/passkeys.ts';
import { openRedisStore, uniquePrefix } from '../helpers/redis.ts';
import { REDIS_URL, skipUnless } from '../helpers/services.ts';

const skip = (await skipUnless('redis')) || (await skipUnless('postgres'));
after(closeTestDatabases);

/** Two instances built as `npm start` builds them: one Redis (closed mode: no silent local state), one PostgreSQL. */
async function twoInstances(t: TestContext) {
  const env = {
    REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix(),
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    RATE_LIMIT_STORE_FAILURE: 'closed',
  };
  const a = await createTestApp({ database: 'postgres', env });
  t.after(() => a.close());
  const b: FastifyInstance = await buildApp(testConfig({ ...env, DATABASE_URL: a.database.url! }));
  t.after(() => b.close());
  await b.ready();
  return { a, b };
}

/** The same browser (its pre-session cookie and CSRF token) talking to another instance. */
function sameBrowserOn(app: FastifyInstance, client: TestClient): TestClient {
  const twin = new TestClient(app, client.remoteAddress);
  twin.setCookie(CSRF_COOKIE, client.cookie(CSRF_COOKIE)!);
  twin.csrfToken = client.csrfToken;
  return twin;
}

describe('passkeys on two instances, one Redis, one PostgreSQL', { skip }, () => {
  it('signs in on B with a challenge A issued, once; a replay on either instance is refused', async (t) => {
    const { a, b } = await twoInstances(t);
    await a.database.db.query('DELETE FROM passkeys');
    const { authenticator } = await ownerWithPasskey(a.client, 'alice@example.com');
    const onA = a.client();
    const options = await signInOptions(onA);
    const answer = authenticator.get(options);
    const onB = sameBrowserOn(b, onA);
    const signedIn = await sendAssertion(onB, answer);
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    assert.equal(signedIn.json<{ user: { email: string } }>().user.email, 'alice@example.com');
    assertError(await sendAssertion(sameBrowserOn(a.app, onA), answer), 401, 'INVALID_CREDENTIALS');
    assertError(await sendAssertion(sameBrowserOn(b, onA), answer), 401, 'INVALID_CREDENTIALS');
  });

  it('keeps every live challenge through a flood past the capacity of Redis’s store: newcomers get 503 LOGIN_BUSY', async (t) => {
    // Both instances on one Redis with a small capacity, on one test clock (so challenges end when it moves).
    const clock = new ManualClock();
    const capacity = 12;
    const prefix = uniquePrefix();
    const onRedis = async () => localStack(await openRedisStore({ prefix, clock, marksMax: capacity }));
    const a = await createTestApp({ database: 'postgres', clock, stack: await onRedis() });
    t.after(() => a.close());
    await a.database.db.query('DELETE FROM passkeys');
    const b: FastifyInstance = await buildApp(testConfig({ DATABASE_URL: a.database.url! }), {
      clock,
      store: await onRedis(),
    });
    t.after(() => b.close());
    await b.ready();
    // Every other browser of the flood asks B: the capacity is the fleet's, not an instance's.
    let next = 0;
    await floodsNoChallengeOut(
      {
        ...a,
        client: (options) => (next++ % 2 === 0 ? a.client(options) : onInstance(b, a.client(options))),
      },
      'alice@example.com',
      capacity,
    );
  });
});

/** A new client of `app` with the address `client` would have had. */
function onInstance(app: FastifyInstance, client: TestClient): TestClient {
  return new TestClient(app, client.remoteAddress);
}
