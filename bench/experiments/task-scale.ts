// The task list, export and import at scale (docs/rules.md#finding-tasks): a fresh database, N tasks, the
// server in its own process (as `npm start` runs it), timings over the port and the server's own RSS.
//
// Run: node bench/experiments/task-scale.ts   (TASK_BENCH_DB=postgres|embedded, TASK_BENCH_N (1,000,000;
// embedded 100,000), TASK_BENCH_IMPORT (100,000), TASK_BENCH_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres).
// Prints one JSON report.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { pgliteOptions } from '../../src/db/database.ts';
import { DEMO_PASSWORD } from '../../src/db/seed.ts';
import { spawnNpmStart } from '../lib/npm-start.ts';

const EMBEDDED = process.env.TASK_BENCH_DB === 'embedded';
const N = Number(process.env.TASK_BENCH_N ?? (EMBEDDED ? 100_000 : 1_000_000));
const IMPORT_ROWS = Number(process.env.TASK_BENCH_IMPORT ?? 100_000);
const ADMIN_URL = process.env.TASK_BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SAMPLES = 40;

// 1,000 employees, 500 clients, N tasks spread over them, words from a small vocabulary.
const LOAD = [
  `INSERT INTO users (email, name, role, password_hash)
   SELECT 'bench' || n || '@example.com', 'Bench ' || n, 'employee', 'x' FROM generate_series(1, 1000) n`,
  `INSERT INTO clients (name) SELECT 'Client ' || n FROM generate_series(1, 500) n`,
  `INSERT INTO tasks (client_id, title, description, status, priority, due_date, assignee_id, updated_at)
   SELECT (SELECT min(id) FROM clients WHERE name LIKE 'Client %') + n % 500,
          (ARRAY['Review','Prepare','Audit','Call','Update','Draft'])[1 + n % 6] || ' ' ||
            (ARRAY['contract','invoice','records','expenses','report','budget'])[1 + n / 7 % 6] || ' ' || n,
          (ARRAY['quarterly','urgent','customer','supplier','internal','annual','regional'])[1 + n / 11 % 7],
          (ARRAY['open','in_progress','done'])[1 + n % 3],
          (ARRAY['low','normal','high','urgent'])[1 + n / 3 % 4],
          CASE WHEN n % 4 = 0 THEN NULL ELSE date '2026-01-01' + n % 700 END,
          CASE WHEN n % 10 = 0 THEN NULL ELSE (SELECT min(id) FROM users WHERE email LIKE 'bench%') + n % 1000 END,
          now() - (n % 100000) * interval '1 minute'
     FROM generate_series(1, ${N}) n`,
  'ANALYZE',
];

const database = `task_bench_${process.pid}`;
const dataDir = EMBEDDED ? mkdtempSync(path.join(tmpdir(), 'task-bench-')) : '';
const url = new URL(ADMIN_URL);
url.pathname = `/${database}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
if (!EMBEDDED) {
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
}
const serverEnv: Record<string, string> = EMBEDDED
  ? { DATA_DIR: dataDir, DATABASE_URL: '' }
  : { DATABASE_URL: url.toString() };

const report: Record<string, unknown> = { database: EMBEDDED ? 'embedded' : 'postgres', tasks: N };
let server: Server | undefined;
try {
  // A first start makes the schema and the demo accounts; the load runs while no server holds the
  // database (the embedded one has one owner) and past the app's statement timeout.
  server = await startServer(serverEnv);
  await server.stop();
  let started = performance.now();
  if (EMBEDDED) {
    const db = new PGlite(dataDir, pgliteOptions());
    for (const statement of LOAD) await db.exec(statement);
    await db.close();
  } else {
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    for (const statement of LOAD) await db.query(statement);
    await db.end();
  }
  report.loadSeconds = round((performance.now() - started) / 1000);
  server = await startServer(serverEnv);
  const origin = server.origin;

  const { cookie, csrf } = await signIn(origin);
  const get = (path: string) => fetch(origin + path, { headers: { cookie } });

  // The first page of each filter, sort and q; and a page deep in a walk.
  const lists: Record<string, string> = {
    default: '',
    'sort=-updatedAt': 'sort=-updatedAt',
    'sort=dueDate': 'sort=dueDate',
    'sort=-priority': 'sort=-priority',
    'status=open&status=done': 'status=open&status=done',
    'priority=urgent': 'priority=urgent',
    'dueBefore=2026-02-01': 'dueBefore=2026-02-01',
    'assigneeId=none': 'assigneeId=none',
    'assigneeId=5&sort=dueDate': 'assigneeId=5&sort=dueDate',
    'q=invoice': 'q=invoice',
    'q=aud+cust': 'q=aud+cust',
    'q=invoice&sort=-updatedAt': 'q=invoice&sort=-updatedAt',
    // Few matches or none: the word index answers after a short walk.
    'q=123456': 'q=123456',
    'q=xyzzy': 'q=xyzzy',
    // Two broad words that never meet: a walk finds nothing, the word index reads both long lists.
    'q=audit+review': 'q=audit+review',
    // Hostile: as many one-letter prefixes as 200 characters hold, and every word of the vocabulary's start.
    'q=a+b+…+(100 one-letter words)': `q=${'abcdefghijklmnopqrstuvwxyz'.repeat(4).slice(0, 100).split('').join('+')}`,
    'q=a+a+…+(100 times a)': `q=${Array.from({ length: 100 }, () => 'a').join('+')}`,
  };
  const latencies: Record<string, Awaited<ReturnType<typeof timed>>> = {};
  for (const [name, query] of Object.entries(lists)) {
    latencies[name] = await timed(() => get(`/api/employee/tasks?${query}`));
    // Deep: the cursor after 20 pages of 200.
    let cursor = '';
    for (let i = 0; i < 20; i++) {
      const page = (await (await get(`/api/employee/tasks?limit=200&${query}${cursor}`)).json()) as {
        nextCursor: string | null;
      };
      if (!page.nextCursor) break;
      cursor = `&cursor=${page.nextCursor}`;
    }
    if (cursor)
      latencies[`${name} (page 21)`] = await timed(() => get(`/api/employee/tasks?${query}${cursor}`));
  }
  report.listMs = latencies;

  // The export of every task: its time and the server's resident memory, sampled from /proc.
  const rssBefore = server.rss();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, server!.rss());
  }, 20);
  started = performance.now();
  const exported = await get('/api/employee/tasks/export');
  let bytes = 0;
  let lines = 0;
  let firstRows = '';
  for await (const chunk of exported.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    if (firstRows.length < 4_000_000) firstRows += Buffer.from(chunk).toString();
  }
  clearInterval(sampler);
  report.export = {
    rows: lines - 1,
    seconds: round((performance.now() - started) / 1000),
    megabytes: round(bytes / 1024 / 1024),
    serverRssBeforeMegabytes: round(rssBefore / 1024),
    serverRssGrowthMegabytes: round((rssPeak - rssBefore) / 1024),
  };

  // An import of IMPORT_ROWS rows (the start of the export, repeated to the count).
  const rows = firstRows.split('\r\n').slice(1, -1);
  const body = [
    firstRows.split('\r\n')[0],
    ...Array.from({ length: IMPORT_ROWS }, (_, i) => rows[i % rows.length]),
  ].join('\r\n');
  started = performance.now();
  const imported = await fetch(`${origin}/api/employee/tasks/import`, {
    method: 'POST',
    headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'text/csv' },
    body,
  });
  report.import = {
    rows: IMPORT_ROWS,
    megabytes: round(Buffer.byteLength(body) / 1024 / 1024),
    status: imported.status,
    seconds: round((performance.now() - started) / 1000),
    ...(imported.status === 201 ? {} : { answer: (await imported.text()).slice(0, 300) }),
  };
} finally {
  await server?.stop();
  if (EMBEDDED) rmSync(dataDir, { recursive: true, force: true });
  else {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}
console.log(JSON.stringify(report, null, 2));

/** p50 and p95 of a request, or the status it answered when that was not 200 (a timeout: 503). */
async function timed(
  call: () => Promise<Response>,
): Promise<{ p50: number; p95: number } | { status: number; ms: number }> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES + 5; i++) {
    const start = performance.now();
    const response = await call();
    await response.arrayBuffer();
    if (response.status !== 200) return { status: response.status, ms: round(performance.now() - start) };
    if (i >= 5) times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => round(times[Math.min(times.length - 1, Math.floor(q * times.length))]!);
  return { p50: at(0.5), p95: at(0.95) };
}

async function signIn(base: string): Promise<{ cookie: string; csrf: string }> {
  const bootstrap = await fetch(`${base}/api/csrf-token`);
  const { csrfToken } = (await bootstrap.json()) as { csrfToken: string };
  const jar = new Map<string, string>();
  const keep = (response: Response) => {
    for (const c of response.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [name] = pair!.split('=');
      jar.set(name!, pair!);
    }
  };
  keep(bootstrap);
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: {
      cookie: [...jar.values()].join('; '),
      'x-csrf-token': csrfToken,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ email: 'alice@example.com', password: DEMO_PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`sign-in: ${login.status} ${await login.text()}`);
  keep(login);
  const { csrfToken: csrf } = (await login.json()) as { csrfToken: string };
  return { cookie: [...jar.values()].join('; '), csrf };
}

interface Server {
  origin: string;
  /** The server's resident memory now, in KiB. */
  rss(): number;
  stop(): Promise<void>;
}

/** `npm start`'s command in a process of its own, on a free port; resolves once /readyz answers 200. */
async function startServer(env: Record<string, string>): Promise<Server> {
  const { child, port } = await spawnNpmStart({
    ...env,
    NODE_ENV: 'development',
    SEED_DEMO: 'true',
    SESSION_SECRET: 'task-bench-secret-task-bench-secret-0123',
    RATE_LIMIT_AUTHENTICATED: '100000000/1m',
    RATE_LIMIT_TASK_IMPORT: '1000/1m',
    LOG_LEVEL: 'warn',
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(origin, child);
  return {
    origin,
    rss: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function waitReady(base: string, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + 180_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('server not ready within 180 s');
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
