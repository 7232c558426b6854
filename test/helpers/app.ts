// Builds the real app for a test (own clock, own store, shared test database) and talks to it over HTTP.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import type { PasswordHasher } from '../../src/auth/passwords.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { DEMO_PASSWORD } from '../../src/db/seed.ts';
import { localStack, type StoreStack } from '../../src/rate-limit/stores/create-store.ts';
import type { RateLimitStore } from '../../src/rate-limit/stores/store.ts';
import { type DatabaseKind, TEST_PASSWORD_HASH_COST, type TestDatabase, testDatabase } from './database.ts';
import { checkAnswersAgainstDocument } from './openapi-conformance.ts';

/** The seed's password of every demo account, re-exported for the tests that sign in. */
export { DEMO_PASSWORD };
export const TEST_SESSION_SECRET = 'test-secret-test-secret-test-secret-0123';

export interface TestAppOptions {
  /** Environment variables on top of the test defaults (budgets such as RATE_LIMIT_BULK=3/1m). */
  readonly env?: Record<string, string>;
  readonly database?: DatabaseKind;
  readonly clock?: ManualClock;
  /** A store kept in this process (no readiness check, no failover). */
  readonly store?: RateLimitStore;
  /** A whole store stack (createStore's, or a failover over a fake remote store); wins over `store`. */
  readonly stack?: StoreStack;
  /** What computes password hashes (a HeldHasher to hold checks); argon2id by default. */
  readonly hasher?: PasswordHasher;
  /** Changes the demo data after it is put back and before the app starts (old hashes, say). */
  readonly beforeStart?: (database: TestDatabase) => Promise<void>;
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly clock: ManualClock;
  readonly database: TestDatabase;
  /** A new client with its own cookie jar (and, by default, its own socket address). */
  client(options?: { remoteAddress?: string }): TestClient;
  close(): Promise<void>;
}

/** The config of a test app: the documented defaults, a fast password hash, a fixed secret. */
export function testConfig(env: Record<string, string> = {}) {
  return loadConfig({
    NODE_ENV: 'test',
    SESSION_SECRET: TEST_SESSION_SECRET,
    PASSWORD_HASH_COST: String(TEST_PASSWORD_HASH_COST),
    SESSION_CACHE_TTL: '0',
    ...env,
  });
}

/** Builds an app on this file's shared database, after putting the demo data back. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await testDatabase(options.database ?? 'embedded');
  await database.reset();
  await options.beforeStart?.(database);
  const clock = options.clock ?? new ManualClock();
  const app = await buildApp(testConfig(options.env), {
    clock,
    database: database.db,
    store: options.stack ?? (options.store && localStack(options.store)),
    hasher: options.hasher,
  });
  await app.ready();
  // Every answer a test sees must match the OpenAPI document: status, body and headers.
  checkAnswersAgainstDocument(app);
  let nextAddress = 1;
  return {
    app,
    clock,
    database,
    client: (clientOptions = {}) =>
      new TestClient(app, clientOptions.remoteAddress ?? `198.51.100.${nextAddress++}`),
    close: () => app.close(),
  };
}

/** createTestApp, closed when test `t` ends. */
export async function testAppFor(
  t: { after(fn: () => Promise<void>): void },
  options: TestAppOptions = {},
): Promise<TestApp> {
  const testApp = await createTestApp(options);
  t.after(testApp.close);
  return testApp;
}

export type Response = LightMyRequestResponse & { json<T = Record<string, unknown>>(): T };

/** One browser-like client: a cookie jar, its CSRF token, and a fixed source address. */
export class TestClient {
  private readonly cookies = new Map<string, string>();
  csrfToken: string | null = null;

  private readonly app: FastifyInstance;
  readonly remoteAddress: string;

  constructor(app: FastifyInstance, remoteAddress: string) {
    this.app = app;
    this.remoteAddress = remoteAddress;
  }

  async request(options: InjectOptions & { csrf?: boolean }): Promise<Response> {
    const headers: Record<string, string> = { ...(options.headers as Record<string, string>) };
    const jar = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (jar && !headers.cookie) headers.cookie = jar;
    if (options.csrf !== false && this.csrfToken && !('x-csrf-token' in headers))
      headers['x-csrf-token'] = this.csrfToken;
    const { csrf: _csrf, ...rest } = options;
    const response = (await this.app.inject({
      remoteAddress: this.remoteAddress,
      ...rest,
      headers,
    })) as Response;
    for (const cookie of response.cookies as {
      name: string;
      value: string;
      maxAge?: number;
      expires?: Date;
    }[]) {
      const expired = cookie.maxAge === 0 || (cookie.expires && cookie.expires.getTime() <= Date.now());
      if (expired || cookie.value === '') this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }

  get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.request({ method: 'GET', url, headers });
  }

  /** Fetches a CSRF token (and its cookie) and keeps it for the unsafe requests that follow. */
  async fetchCsrf(): Promise<string> {
    const response = await this.get('/api/csrf-token');
    this.csrfToken = response.json<{ csrfToken: string }>().csrfToken;
    return this.csrfToken;
  }

  async login(email: string, password = DEMO_PASSWORD): Promise<Response> {
    if (!this.csrfToken) await this.fetchCsrf();
    const response = await this.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email, password },
    });
    if (response.statusCode === 200) this.csrfToken = response.json<{ csrfToken: string }>().csrfToken;
    return response;
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }
}
