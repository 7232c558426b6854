// Contract §14 on a fleet: a passkey challenge issued by one instance works once, on another, over Redis and PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { CSRF_COOKIE } from '../../src/http/plugins/csrf.ts';
import { createTestApp, TestClient, testConfig } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { ownerWithPasskey, sendAssertion, signInOptions } from '../helpers/passkeys.ts';
import { uniquePrefix } from '../helpers/redis.ts';
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
});
