// Target: Express + express-rate-limit keyed by user id, in memory or with rate-limit-redis (BENCH_STORE).
import { createServer } from 'node:http';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { budget, redisClient, redisPrefix, storeKind, userFor } from '../lib/peer.ts';
import { serveTarget } from '../lib/serve.ts';

const redis = storeKind === 'redis' ? redisClient() : undefined;
const app = express();
app.disable('x-powered-by');
app.use(
  rateLimit({
    windowMs: budget.windowMs,
    limit: budget.limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (request) => String(request.headers['x-user-id']),
    ...(redis
      ? {
          store: new RedisStore({
            prefix: redisPrefix,
            sendCommand: (command: string, ...args: string[]) =>
              redis.call(command, ...args) as Promise<number | string>,
          }),
        }
      : {}),
  }),
);
app.get('/api/auth/me', (request, response) => {
  const user = userFor(request.headers['x-user-id']);
  if (user) response.json({ user });
  else response.status(401).json({ error: 'UNAUTHENTICATED' });
});

const server = createServer(app);
await serveTarget(server, {
  close: async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    redis?.disconnect();
  },
});
