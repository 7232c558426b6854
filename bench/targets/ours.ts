// Target: this service (buildApp, the whole stack) with 1000 extra users, each logged in once.
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../../src/app.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { loadConfig } from '../../src/config.ts';
import { type BenchSession, benchEmails, logInAll, serveTarget } from '../lib/serve.ts';

const PASSWORD = 'bench-password';

const config = loadConfig();
const app = await buildApp(config);
if ((process.env.BENCH_EXPECT_STORE === 'redis') !== (await usesRedis())) {
  console.error(`ours: expected the ${process.env.BENCH_EXPECT_STORE} store, createStore chose otherwise`);
  process.exit(2);
}

// The demo data has 4 accounts; the bench needs 1000 distinct users, so it adds them (one hash for all).
// A target started again on the same database (a later round) finds them there.
const emails = benchEmails();
await app.services.db.query(
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

await app.listen({ host: '127.0.0.1', port: 0 });
await serveTarget(app.server, { extra: sessions, close: () => app.close() });

/**
 * Logs one user in as a browser would: CSRF token first, then the login, keeping the session cookie.
 * A 503 (the Redis store timing out on a busy machine) is retried a few times.
 */
async function logIn(email: string, attempt = 1): Promise<BenchSession> {
  const bootstrap = await app.inject({ method: 'GET', url: '/api/csrf-token' });
  const preSession = bootstrap.cookies.find((c) => c.name === 'tp_csrf');
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: {
      cookie: `tp_csrf=${preSession?.value}`,
      'x-csrf-token': bootstrap.json<{ csrfToken: string }>().csrfToken,
    },
    payload: { email, password: PASSWORD },
  });
  if (login.statusCode === 503 && attempt < 5) {
    await sleep(200 * attempt);
    return logIn(email, attempt + 1);
  }
  const session = login.cookies.find((c) => c.name === 'tp_session');
  if (login.statusCode !== 200 || !session)
    throw new Error(`login of ${email}: ${login.statusCode} ${login.body}`);
  return { cookie: `tp_session=${session.value}`, csrfToken: login.json<{ csrfToken: string }>().csrfToken };
}

/** Whether the store decides in Redis: then /readyz names Redis among the dependencies, as an operator sees it. */
async function usesRedis(): Promise<boolean> {
  const readiness = await app.inject({ method: 'GET', url: '/readyz' });
  return 'redis' in readiness.json<Record<string, string>>();
}
