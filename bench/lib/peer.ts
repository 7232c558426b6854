// What every peer target shares: the users it answers about, the budget and store the driver chose.
import { Redis } from 'ioredis';
import { envInt } from './serve.ts';

export interface BenchUser {
  id: number;
  email: string;
  name: string;
  role: 'employee';
}

/** The same 1000 users (ids 1…n, `bench-n@example.test`), made once like a session cache. */
export const users: BenchUser[] = Array.from({ length: envInt('BENCH_USERS', 1000) }, (_, i) => ({
  id: i + 1,
  email: `bench-${i + 1}@example.test`,
  name: `Bench User ${i + 1}`,
  role: 'employee',
}));

/** The user an `x-user-id` header names, or null (a 401 for the peer). */
export function userFor(header: string | string[] | undefined): BenchUser | null {
  const id = typeof header === 'string' ? Number(header) : 0;
  return users[id - 1] ?? null;
}

/** Budget of the generic per-user bucket: `BENCH_LIMIT` requests per `BENCH_WINDOW_MS`. */
export const budget = {
  limit: envInt('BENCH_LIMIT', 999_999_999),
  windowMs: envInt('BENCH_WINDOW_MS', 15 * 60_000),
};

/** `memory` unless the driver asked for `redis` (then `BENCH_REDIS_URL` says where). */
export const storeKind: 'memory' | 'redis' = process.env.BENCH_STORE === 'redis' ? 'redis' : 'memory';

/** A key prefix of this process alone, so rounds and targets never share counters. */
export const redisPrefix = `bench:${process.pid}:`;

export function redisClient(): Redis {
  const url = process.env.BENCH_REDIS_URL;
  if (!url) throw new Error('BENCH_STORE=redis needs BENCH_REDIS_URL');
  return new Redis(url, { maxRetriesPerRequest: 1, enableAutoPipelining: false });
}

/** The JSON schema of the answer, for the Fastify peers (ours serialises with a schema too). */
export const meResponseSchema = {
  200: {
    type: 'object',
    required: ['user'],
    properties: {
      user: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          email: { type: 'string' },
          name: { type: 'string' },
          role: { type: 'string' },
        },
      },
    },
  },
  401: { type: 'object', properties: { error: { type: 'string' } } },
} as const;
