// Target: the Fastify stack a team would assemble for this API (session, CSRF, helmet, limit, logs).
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import session from '@fastify/session';
import Fastify from 'fastify';
import {
  type BenchUser,
  budget,
  meResponseSchema,
  redisClient,
  redisPrefix,
  storeKind,
  users,
} from '../lib/peer.ts';
import { type BenchSession, cookieHeader, logInAll, serveTarget } from '../lib/serve.ts';

/*
 * Each plugin with its documented options: @fastify/session on @fastify/cookie (memory store),
 * @fastify/csrf-protection checking unsafe methods, @fastify/helmet's defaults, @fastify/rate-limit
 * keyed by the signed-in user (after the session is loaded), in memory or in Redis (BENCH_STORE),
 * and Fastify's own request logs at info (pino, to stdout). Type-checked with the plugins' own
 * declarations (targets/tsconfig.json), apart from the service's.
 */
declare module 'fastify' {
  interface Session {
    userId?: number;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const PASSWORD = 'bench-password';

const redis = storeKind === 'redis' ? redisClient() : undefined;
const app = Fastify({ logger: { level: 'info' } });
await app.register(helmet);
await app.register(cookie);
await app.register(session, {
  secret: 'bench-session-secret-bench-session-secret',
  cookie: { secure: false, sameSite: 'lax' },
  saveUninitialized: false,
});
await app.register(csrf, { sessionPlugin: '@fastify/session' });
app.addHook('onRequest', (request, reply, done) => {
  if (SAFE_METHODS.has(request.method)) done();
  else app.csrfProtection(request, reply, done);
});
await app.register(rateLimit, {
  max: budget.limit,
  timeWindow: budget.windowMs,
  hook: 'preHandler',
  keyGenerator: (request) => String(request.session.get('userId') ?? request.ip),
  // Above the user count, so the LRU never forgets a counter during the run.
  cache: 10_000,
  ...(redis ? { redis, nameSpace: redisPrefix } : {}),
});

const byEmail = new Map<string, BenchUser>(users.map((user) => [user.email, user]));

app.get('/api/csrf-token', async (_request, reply) => ({ csrfToken: reply.generateCsrf() }));
app.post<{ Body: { email: string; password: string } }>('/api/auth/login', async (request, reply) => {
  const user = byEmail.get(request.body.email);
  if (!user || request.body.password !== PASSWORD) return reply.code(401).send({ error: 'INVALID' });
  await request.session.regenerate();
  // regenerate() gives the request a new session object.
  request.session.set('userId', user.id);
  return { user, csrfToken: reply.generateCsrf() };
});
app.get('/api/auth/me', { schema: { response: meResponseSchema } }, async (request, reply) => {
  const id = request.session.get('userId');
  const user = id === undefined ? undefined : users[id - 1];
  return user ? { user } : reply.code(401).send({ error: 'UNAUTHENTICATED' });
});
await app.ready();

const sessions: BenchSession[] = await logInAll(async (email) => {
  const token = await app.inject({ method: 'GET', url: '/api/csrf-token' });
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { cookie: cookieHeader(token.headers['set-cookie']), 'x-csrf-token': token.json().csrfToken },
    payload: { email, password: PASSWORD },
  });
  if (login.statusCode !== 200) throw new Error(`login of ${email}: ${login.statusCode} ${login.body}`);
  return { cookie: cookieHeader(login.headers['set-cookie']), csrfToken: login.json().csrfToken };
});
await serveTarget(app.server, {
  extra: sessions,
  close: async () => {
    await app.close();
    redis?.disconnect();
  },
});
