// Target: the Express 5 stack a team would assemble for this API (session, CSRF, helmet, limit, logs).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { csrfSync } from 'csrf-sync';
import express from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import session from 'express-session';
import helmet from 'helmet';
import { pinoHttp } from 'pino-http';
import { type BenchUser, budget, users } from '../lib/peer.ts';
import { type BenchSession, cookieHeader, logInAll, serveTarget } from '../lib/serve.ts';

/*
 * Each middleware with its documented options: express-session (its memory store), csrf-sync
 * (synchroniser tokens in the session, unsafe methods checked), helmet's defaults,
 * express-rate-limit keyed by the signed-in user, and pino-http's request logs at info (stdout).
 */
declare module 'express-session' {
  interface SessionData {
    userId: number;
  }
}

const PASSWORD = 'bench-password';
const byEmail = new Map<string, BenchUser>(users.map((user) => [user.email, user]));
const { csrfSynchronisedProtection, generateToken } = csrfSync();

const app = express();
app.disable('x-powered-by');
app.use(pinoHttp({ level: 'info' }));
app.use(helmet());
app.use(express.json());
app.use(
  session({
    secret: 'bench-session-secret-bench-session-secret',
    cookie: { secure: false, sameSite: 'lax' },
    resave: false,
    saveUninitialized: false,
  }),
);
app.use(csrfSynchronisedProtection);
app.use(
  rateLimit({
    windowMs: budget.windowMs,
    limit: budget.limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (request) =>
      request.session.userId === undefined
        ? ipKeyGenerator(request.ip ?? '')
        : String(request.session.userId),
  }),
);

app.get('/api/csrf-token', (request, response) => {
  response.json({ csrfToken: generateToken(request) });
});
app.post('/api/auth/login', (request, response, next) => {
  const { email, password } = request.body as { email: string; password: string };
  const user = byEmail.get(email);
  if (!user || password !== PASSWORD) {
    response.status(401).json({ error: 'INVALID' });
    return;
  }
  request.session.regenerate((error) => {
    if (error) return next(error);
    request.session.userId = user.id;
    response.json({ user, csrfToken: generateToken(request, true) });
  });
});
app.get('/api/auth/me', (request, response) => {
  const id = request.session.userId;
  const user = id === undefined ? undefined : users[id - 1];
  if (user) response.json({ user });
  else response.status(401).json({ error: 'UNAUTHENTICATED' });
});

const server = createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const sessions: BenchSession[] = await logInAll(async (email) => {
  const token = await fetch(`${base}/api/csrf-token`);
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: {
      cookie: cookieHeader(token.headers.getSetCookie()),
      'x-csrf-token': ((await token.json()) as { csrfToken: string }).csrfToken,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`login of ${email}: ${login.status} ${await login.text()}`);
  const { csrfToken } = (await login.json()) as { csrfToken: string };
  return { cookie: cookieHeader(login.headers.getSetCookie()), csrfToken };
});
await serveTarget(server, {
  extra: sessions,
  close: () => new Promise<void>((resolve) => server.close(() => resolve())),
});
