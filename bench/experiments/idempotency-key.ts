// What an Idempotency-Key costs a bulk reassignment: no key, a new key each, and replayed.
//
//   node bench/experiments/idempotency-key.ts
//   BENCH_BASELINE=../before node bench/experiments/idempotency-key.ts   # and the unkeyed PATCH of another checkout
//
// bench:ab measures GET /api/auth/me only; this drives the bulk route, whose hooks the key adds.
// Ours · memory on its embedded database (BENCH_AB_REDIS=1: on Redis; BENCH_POSTGRES=1: on a schema
// of its own in the tests' PostgreSQL, TEST_DATABASE_URL, whose CPU is not the target's), the bulk budget never
// refusing, BENCH_USERS users (default 50) each reassigning one task of its own to Bob. Variants:
// - `unkeyed`: no header, as before the key existed (BENCH_BASELINE adds `baseline`, the same
//   request to that checkout's server);
// - `keyed`: a new Idempotency-Key on every request (the claim, then the transaction with the answer);
// - `replay`: one key per user, sent again and again (after its first answer: the stored answer).
// Every round measures each variant once on the same processes, in a rotated order; medians over rounds.
import { rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type autocannon from 'autocannon';
import pg from 'pg';
import { benchDataDirs, NEVER_REFUSES, oursEnv } from '../lib/catalogue.ts';
import { type Measurement, measure, median } from '../lib/load.ts';
import { describeMachine, pinProcess } from '../lib/machine.ts';
import { int, options } from '../lib/options.ts';
import { openBenchRedis } from '../lib/redis.ts';
import type { BenchSession } from '../lib/serve.ts';
import type { TargetProcess as Target } from '../lib/target-process.ts';

const users = int('BENCH_USERS', 50);
const BOB = 2;
const machine = describeMachine();
if (machine.pinning) pinProcess(process.pid, machine.pinning.load);
const redis =
  process.env.BENCH_AB_REDIS === '1'
    ? await openBenchRedis(options.redisUrl, machine.pinning?.load ?? null)
    : null;
const never = `${NEVER_REFUSES.limit}/${NEVER_REFUSES.windowMs}ms`;
const postgresUrl =
  process.env.BENCH_POSTGRES === '1'
    ? withUser(process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/test')
    : null;

/** Like libpq, a URL without a user connects as the OS user. */
function withUser(text: string): string {
  const url = new URL(text);
  url.username ||= process.env.PGUSER ?? userInfo().username;
  return url.toString();
}
const schemas: string[] = [];

/** A database URL of a fresh schema on `postgresUrl` (dropped at the end), or null for the embedded one. */
async function databaseUrl(): Promise<string | null> {
  if (!postgresUrl) return null;
  const schema = `bench_idempotency_${process.pid}_${schemas.length}`;
  await onPostgres(`CREATE SCHEMA ${schema}`);
  schemas.push(schema);
  const url = new URL(postgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function onPostgres(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl! });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function start(label: string, checkout: string): Promise<Target> {
  const module = pathToFileURL(`${checkout}/bench/lib/target-process.ts`).href;
  const { TargetProcess } = (await import(module)) as typeof import('../lib/target-process.ts');
  const env = oursEnv({
    users,
    redisUrl: redis?.url ?? null,
    databaseUrl: await databaseUrl(),
    env: { RATE_LIMIT_BULK: never, RATE_LIMIT_AUTHENTICATED: never },
  });
  console.log(`[idempotency] starting ${label} (${checkout})`);
  return TargetProcess.start({ name: label, file: 'ours', env }, machine.pinning?.server ?? null);
}

/** One PATCH per user: its own task (the demo has 200), to Bob; `key` names the user's Idempotency-Key, if any. */
function bulkRequests(target: Target, key: (user: number) => (() => string) | null): autocannon.Request[] {
  const sessions = target.extra as BenchSession[];
  return sessions.map((session, i) => {
    const headers = {
      cookie: session.cookie,
      'x-csrf-token': session.csrfToken,
      'content-type': 'application/json',
    };
    const request: autocannon.Request = {
      method: 'PATCH',
      path: '/api/employee/tasks/bulk',
      headers,
      body: JSON.stringify({ taskIds: [(i % 200) + 1], assigneeId: BOB }),
    };
    const keyOf = key(i);
    if (keyOf)
      request.setupRequest = (req) => ({ ...req, headers: { ...headers, 'idempotency-key': keyOf() } });
    return request;
  });
}

let next = 0;
const fresh = () => () => `bench-${process.pid}-${next++}`;
const fixed = (user: number) => () => `bench-${process.pid}-replay-${user}`;

const ours = await start('ours', resolve('.'));
const baselineDir = process.env.BENCH_BASELINE;
const baseline = baselineDir ? await start('baseline', resolve(baselineDir)) : null;
const variants: { label: string; target: Target; requests: autocannon.Request[] }[] = [
  { label: 'unkeyed', target: ours, requests: bulkRequests(ours, () => null) },
  { label: 'keyed', target: ours, requests: bulkRequests(ours, fresh) },
  { label: 'replay', target: ours, requests: bulkRequests(ours, fixed) },
  ...(baseline
    ? [{ label: 'baseline', target: baseline, requests: bulkRequests(baseline, () => null) }]
    : []),
];
const results = new Map<string, Measurement[]>(variants.map((v) => [v.label, []]));
try {
  for (let round = 1; round <= options.rounds; round++) {
    const shift = (round - 1) % variants.length;
    for (const variant of [...variants.slice(shift), ...variants.slice(0, shift)]) {
      const measured = await measure(variant.target, variant.requests, {
        duration: options.duration,
        warmup: options.warmup,
        connections: options.connections,
      });
      results.get(variant.label)!.push(measured);
      console.log(
        `[idempotency] round ${round}/${options.rounds} ${variant.label.padEnd(8)} ` +
          `${measured.cpuMicrosPerRequest.toFixed(1)} µs CPU/req  ${measured.rps.toFixed(0)} req/s  ` +
          `p50 ${measured.p50} ms  p99 ${measured.p99} ms  non-2xx ${measured.non2xx}  errors ${measured.errors}`,
      );
    }
  }
  for (const [label, runs] of results) {
    const of = (pick: (m: Measurement) => number) => median(runs.map(pick));
    console.log(
      `[idempotency] median ${label.padEnd(8)} ${of((m) => m.cpuMicrosPerRequest).toFixed(1)} µs CPU/req, ` +
        `${of((m) => m.rps).toFixed(0)} req/s, p50 ${of((m) => m.p50)} ms, p99 ${of((m) => m.p99)} ms ` +
        `over ${runs.length} rounds`,
    );
  }
} finally {
  await ours.stop();
  await baseline?.stop();
  await redis?.stop();
  for (const dir of benchDataDirs()) rmSync(dir, { recursive: true, force: true });
  for (const schema of schemas) await onPostgres(`DROP SCHEMA ${schema} CASCADE`);
}
