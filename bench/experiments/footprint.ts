// The service's own footprint as an operator meets it: time to /readyz and RSS, embedded and on PostgreSQL.
// Run: node bench/experiments/footprint.ts

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../lib/ports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Exactly what `npm start` runs (its environment settings included), exec'd so the pid is the server's. */
const START = (
  JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start;
const DEMO = { email: 'alice@example.com', password: 'demo-password' };

interface FootprintRow {
  readonly mode: string;
  /** Milliseconds from spawn to the first 200 from /readyz. */
  readonly readyMs: number;
  /** VmRSS after start, 4 logins and 50 task lists, in MiB. */
  readonly rssAfterUseMiB: number;
  /** VmHWM (peak RSS) once 8 logins ran at once, in MiB. */
  readonly peakRssMiB: number;
}

/** Starts the server, measures, stops it. `dataDir` null means PostgreSQL at `databaseUrl`. */
async function measureOnce(mode: string, env: Record<string, string>): Promise<FootprintRow> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn('sh', ['-c', `exec ${START}`], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      NODE_ENV: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, child);
    const readyMs = performance.now() - started;
    for (let i = 0; i < 4; i++) {
      const cookie = await login(base);
      for (let j = 0; j < 13 && i * 13 + j < 50; j++) {
        const response = await fetch(`${base}/api/employee/tasks?limit=50`, { headers: { cookie } });
        if (response.status !== 200) throw new Error(`task list answered ${response.status}`);
        await response.arrayBuffer();
      }
    }
    const rssAfterUseMiB = status(child.pid!).rss;
    await Promise.all(Array.from({ length: 8 }, () => login(base)));
    const peakRssMiB = status(child.pid!).hwm;
    return { mode, readyMs: Math.round(readyMs), rssAfterUseMiB, peakRssMiB };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/** Fresh and existing DATA_DIR on the embedded database; PostgreSQL when one answers at `databaseUrl`. */
async function measureFootprint(databaseUrl: string | null): Promise<FootprintRow[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tp-footprint-'));
  const rows: FootprintRow[] = [];
  try {
    const embedded = { DATA_DIR: dataDir, DATABASE_URL: '' };
    rows.push(await measureOnce('embedded, empty DATA_DIR', embedded));
    rows.push(await measureOnce('embedded, existing DATA_DIR', embedded));
    if (databaseUrl) rows.push(await measureOnce('PostgreSQL (DATABASE_URL)', { DATABASE_URL: databaseUrl }));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

async function login(base: string): Promise<string> {
  const csrf = await fetch(`${base}/api/csrf-token`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const preSession = csrf.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const response = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken, cookie: preSession },
    body: JSON.stringify(DEMO),
  });
  if (response.status !== 200) throw new Error(`login answered ${response.status}: ${await response.text()}`);
  return response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

async function waitReady(base: string, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${base}/readyz`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('server not ready within 120 s');
}

/** VmRSS and VmHWM of a process, in MiB, from /proc (Linux). */
function status(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { rss: Math.round(kib('VmRSS') / 1024), hwm: Math.round(kib('VmHWM') / 1024) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await measureFootprint(process.env.BENCH_DATABASE_URL ?? 'postgres://127.0.0.1:5432/test');
  console.table(rows);
}
