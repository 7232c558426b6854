// Target: this service (buildApp, the whole stack) with 1000 extra users, each logged in once.
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../../src/app.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { type BenchSession, benchEmails, cookieHeader, logInAll, serveTarget } from '../lib/serve.ts';

const PASSWORD = 'bench-password';

const config = loadConfig();
// The database is opened here: the bench adds its users to it beside the app.
const db = await openDatabase(config);
const app = await buildApp(config, { database: db });
// Everything goes over the port, sign-ins included: requests through app.inject would leave Node's
// HTTP code with light-my-request's objects in its inline caches, which no production server has.
await app.listen({ host: '127.0.0.1', port: 0 });
const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
if ((process.env.BENCH_EXPECT_STORE === 'redis') !== (await usesRedis())) {
  console.error(`ours: expected the ${process.env.BENCH_EXPECT_STORE} store, createStore chose otherwise`);
  process.exit(2);
}

// The demo data has 4 accounts; the bench needs 1000 distinct users, so it adds them (one hash for all).
// A target started again on the same database (a later round) finds them there.
const emails = benchEmails();
await db.query(
  `INSERT INTO users (email, name, role, password_hash)
   SELECT e, n, 'employee', $3 FROM unnest($1::text[], $2::text[]) AS t(e, n)
   ON CONFLICT DO NOTHING`,
  [
    emails,
    emails.map((_, i) => `Bench User ${i + 1}`),
    await hashPassword(PASSWORD, config.passwordHashCost),
  ],
);

const sessions = await logInAll(logIn);
await serveTarget(app.server, {
  extra: sessions,
  close: async () => {
    await app.close();
    await db.close();
  },
});

/**
 * Logs one user in as a browser would: CSRF token first, then the login, keeping the session cookie.
 * A 503 (the Redis store timing out on a busy machine) is retried a few times.
 */
async function logIn(email: string, attempt = 1): Promise<BenchSession> {
  const bootstrap = await fetch(`${origin}/api/csrf-token`);
  const { csrfToken } = (await bootstrap.json()) as { csrfToken: string };
  const login = await fetch(`${origin}/api/auth/login`, {
    method: 'POST',
    headers: {
      cookie: cookieHeader(bootstrap.headers.getSetCookie()),
      'x-csrf-token': csrfToken,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const body = await login.text();
  if (login.status === 503 && attempt < 5) {
    await sleep(200 * attempt);
    return logIn(email, attempt + 1);
  }
  const session = login.headers.getSetCookie().find((c) => c.startsWith('tp_session='));
  if (login.status !== 200 || !session) throw new Error(`login of ${email}: ${login.status} ${body}`);
  return { cookie: cookieHeader(session), csrfToken: (JSON.parse(body) as { csrfToken: string }).csrfToken };
}

/** Whether the store decides in Redis: then /readyz names Redis among the dependencies, as an operator sees it. */
async function usesRedis(): Promise<boolean> {
  const readiness = await fetch(`${origin}/readyz`);
  return 'redis' in ((await readiness.json()) as Record<string, string>);
}
