// The service's own footprint as an operator meets it: time to /readyz and RSS, embedded and on PostgreSQL.
// Run: node bench/experiments/footprint.ts (FOOTPRINT_ROUNDS=7 for medians of 7 starts a row; a shared
// machine moves the time to /readyz by seconds, the CPU time to it much less).

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNpmStart } from '../lib/npm-start.ts';

const DEMO = { email: 'alice@example.com', password: 'demo-password' };

interface FootprintRow {
  readonly mode: string;
  /** Milliseconds from spawn to the first 200 from /readyz. */
  readonly readyMs: number;
  /** CPU time (user and system, every thread) the server spent until then, in ms. */
  readonly readyCpuMs: number;
  /** VmRSS after start, 4 logins and 50 task lists, in MiB. */
  readonly rssAfterUseMiB: number;
  /** VmHWM (peak RSS) once 8 logins ran at once, in MiB. */
  readonly peakRssMiB: number;
}

/** Starts the server, measures, stops it. `dataDir` null means PostgreSQL at `databaseUrl`. */
async function measureOnce(mode: string, env: Record<string, string>): Promise<FootprintRow> {
  const started = performance.now();
  const { child, port } = await spawnNpmStart({ ...env, LOG_LEVEL: 'warn', NODE_ENV: '' });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, child);
    const readyMs = performance.now() - started;
    const readyCpuMs = cpuMs(child.pid!);
    for (let i = 0; i < 4; i++) {
      const cookie = await login(base);
      for (let j = 0; j < 13 && i * 13 + j < 50; j++) {
        const response = await fetch(`${base}/api/employee/tasks?limit=50`, { headers: { cookie } });
        if (response.status !== 200) throw new Error(`task list answered ${response.status}`);
        await response.arrayBuffer();
      }
    }
    const rssAfterUseMiB = status(child.pid!).rss;
    // As many sign-ins of one account at once as the gate takes (one in line, 4 behind it).
    await Promise.all(Array.from({ length: 5 }, () => login(base)));
    const peakRssMiB = status(child.pid!).hwm;
    return { mode, readyMs: Math.round(readyMs), readyCpuMs, rssAfterUseMiB, peakRssMiB };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/** Each figure's median over `rows` of one mode. */
function medianRow(rows: FootprintRow[]): FootprintRow {
  const median = (pick: (row: FootprintRow) => number) =>
    rows.map(pick).sort((a, b) => a - b)[Math.floor(rows.length / 2)]!;
  return {
    mode: rows.length > 1 ? `${rows[0]!.mode} (median of ${rows.length})` : rows[0]!.mode,
    readyMs: median((row) => row.readyMs),
    readyCpuMs: median((row) => row.readyCpuMs),
    rssAfterUseMiB: median((row) => row.rssAfterUseMiB),
    peakRssMiB: median((row) => row.peakRssMiB),
  };
}

/**
 * Fresh and existing DATA_DIR on the embedded database; PostgreSQL when one answers at
 * `databaseUrl`. With `rounds` over 1, each row is the median of that many starts (each fresh
 * start on a new DATA_DIR; the existing one started again and again).
 */
async function measureFootprint(databaseUrl: string | null, rounds = 1): Promise<FootprintRow[]> {
  const existing = mkdtempSync(path.join(tmpdir(), 'tp-footprint-'));
  const fresh: FootprintRow[] = [];
  const again: FootprintRow[] = [];
  const server: FootprintRow[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const dataDir = round === 0 ? existing : mkdtempSync(path.join(tmpdir(), 'tp-footprint-'));
      try {
        fresh.push(await measureOnce('embedded, empty DATA_DIR', { DATA_DIR: dataDir, DATABASE_URL: '' }));
      } finally {
        if (dataDir !== existing) rmSync(dataDir, { recursive: true, force: true });
      }
    }
    for (let round = 0; round < rounds; round++)
      again.push(await measureOnce('embedded, existing DATA_DIR', { DATA_DIR: existing, DATABASE_URL: '' }));
    if (databaseUrl)
      for (let round = 0; round < rounds; round++)
        server.push(await measureOnce('PostgreSQL (DATABASE_URL)', { DATABASE_URL: databaseUrl }));
  } finally {
    rmSync(existing, { recursive: true, force: true });
  }
  return [fresh, again, server].filter((rows) => rows.length > 0).map(medianRow);
}

/** Signs in as the demo user; a 503 LOGIN_BUSY (a loaded machine) is tried again after its Retry-After, as the page does. */
async function login(base: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const cookie = await loginOnce(base);
    if (typeof cookie === 'string') return cookie;
    if (attempt === 5) throw new Error('login answered 503 LOGIN_BUSY five times');
    await new Promise((resolve) => setTimeout(resolve, cookie.retryAfterS * 1000));
  }
}

async function loginOnce(base: string): Promise<string | { retryAfterS: number }> {
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
  if (response.status === 503) return { retryAfterS: Number(response.headers.get('retry-after')) || 1 };
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

/** User and system CPU time of a process so far, its threads included, in ms, from /proc (Linux). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s
}

/** VmRSS and VmHWM of a process, in MiB, from /proc (Linux). */
function status(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { rss: Math.round(kib('VmRSS') / 1024), hwm: Math.round(kib('VmHWM') / 1024) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await measureFootprint(
    process.env.BENCH_DATABASE_URL ?? 'postgres://127.0.0.1:5432/test',
    Number(process.env.FOOTPRINT_ROUNDS) || 1,
  );
  console.table(rows);
}
