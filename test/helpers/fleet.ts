// Two instances of the app on one PostgreSQL and one Redis (the shipped fleet), and a browser moved between
// them.
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { CSRF_COOKIE } from '../../src/http/plugins/csrf.ts';
import { SESSION_COOKIE } from '../../src/http/session-cookie.ts';
import { createTestApp, type TestApp, TestClient, testConfig } from './app.ts';
import { uniquePrefix } from './redis.ts';
import { REDIS_URL } from './services.ts';

/** Instance `a` (a test app on this file's PostgreSQL) and `b` on the same database, Redis and clock. */
export async function twoInstances(
  t: TestContext,
  env: Record<string, string> = {},
): Promise<{ a: TestApp; b: FastifyInstance }> {
  const shared = { REDIS_URL, REDIS_KEY_PREFIX: uniquePrefix(), ...env };
  const a = await createTestApp({ database: 'postgres', env: shared });
  t.after(() => a.close());
  const b = await buildApp(testConfig({ ...shared, DATABASE_URL: a.database.url! }), { clock: a.clock });
  t.after(() => b.close());
  await b.ready();
  return { a, b };
}

/** The same browser (its cookies and CSRF token) talking to instance `app`. */
export function sameBrowserOn(app: FastifyInstance, browser: TestClient): TestClient {
  const twin = new TestClient(app, browser.remoteAddress);
  for (const name of [SESSION_COOKIE, CSRF_COOKIE]) {
    const value = browser.cookie(name);
    if (value !== undefined) twin.setCookie(name, value);
  }
  twin.csrfToken = browser.csrfToken;
  return twin;
}
