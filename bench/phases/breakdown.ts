// The breakdown phase of npm run bench: system calls, GC and allocation per request of each guard row.
//
// Counts that do not depend on what else the machine does, where CPU time does: for each target,
// one process, BENCH_BREAKDOWN_WARMUP requests so V8 has optimised the hot path, then
//   - a window of BENCH_BREAKDOWN_REQUESTS requests with the process alone: bytes V8 allocated and
//     each collection's kind and cost (the preloaded bench/lib/gc-probe.ts), CPU time for context;
//   - a window of BENCH_BREAKDOWN_SYSCALL_REQUESTS requests under `strace -c -f` (every thread):
//     the system calls by name. strace slows the process, so this window is kept apart.
// BENCH_BASELINE=<checkout> adds that checkout's ours (memory and Redis), as in the instructions phase.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchTarget } from '../lib/catalogue.ts';
import type { ProbeWindow } from '../lib/gc-probe.ts';
import { guardTargets } from '../lib/guard-rows.ts';
import { sendExactly } from '../lib/load.ts';
import { int, options } from '../lib/options.ts';
import type { Phase } from '../lib/phase.ts';
import { table } from '../lib/report.ts';
import { meRequests } from '../lib/requests.ts';
import type { BenchSession } from '../lib/serve.ts';
import type { TargetProcess } from '../lib/target-process.ts';

const settings = {
  warmup: int('BENCH_BREAKDOWN_WARMUP', 30_000),
  requests: int('BENCH_BREAKDOWN_REQUESTS', 20_000),
  syscallRequests: int('BENCH_BREAKDOWN_SYSCALL_REQUESTS', 5_000),
  /** Node or V8 flags for every target of the phase (`--predictable-gc-schedule`, as under callgrind). */
  nodeArgs: (process.env.BENCH_BREAKDOWN_NODE_ARGS ?? '').split(' ').filter(Boolean),
};
const PROBE = fileURLToPath(new URL('../lib/gc-probe.ts', import.meta.url));
export interface BreakdownRow {
  readonly name: string;
  readonly label: string;
  /** System calls per request, by name (every thread of the process). */
  readonly syscalls: Record<string, number>;
  readonly allocatedBytes: number;
  /** Collections per 1000 requests and their cost per request (µs), by V8's kind. */
  readonly collections: Record<string, { per1000: number; microsPerRequest: number }>;
  /** Heap bytes left after the window's last full collection (0: none ran). */
  readonly liveAfterFullGc: number;
  /** CPU time per request in the allocation window: context only, it moves with the machine's load. */
  readonly cpuMicros: number;
  readonly failures: number;
}

function straceMissing(): boolean {
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

export const breakdownPhase: Phase = {
  name: 'breakdown',
  async run(context) {
    const chosen = await guardTargets(context.redis?.url ?? null);
    if (chosen.length === 0) return null;
    const noStrace = straceMissing();
    if (noStrace) context.notes.push('strace is missing: the breakdown has no system calls.');
    const dir = mkdtempSync(join(tmpdir(), 'tp-breakdown-'));
    const rows: BreakdownRow[] = [];
    try {
      for (const { target, start } of chosen)
        rows.push(await breakDown(target, start, dir, context.serverCore, noStrace, context.log));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      data: rows,
      markdown: [
        `### Where a request's CPU goes (one process each; ${settings.warmup} requests of warm-up, ` +
          `allocation and collections over ${settings.requests} requests, system calls over ${settings.syscallRequests} under strace; ${options.connections} connections)`,
        '',
        breakdownTable(rows),
      ].join('\n'),
      // Context for a reader tracing a cost, not the guard's: in the run's own file, not BENCHMARKS.md.
      brief: null,
    };
  },
};

async function breakDown(
  target: BenchTarget,
  start: typeof TargetProcess.start,
  dir: string,
  core: number | null,
  noStrace: boolean,
  log: (message: string) => void,
): Promise<BreakdownRow> {
  const probeFile = join(dir, `${target.name}.probe`);
  log(`breakdown: starting ${target.name}`);
  const server = await start(
    {
      ...target,
      env: { ...target.env, BENCH_PROBE_FILE: probeFile },
      nodeArgs: [...(target.nodeArgs ?? []), ...settings.nodeArgs, `--import=${pathToFileURL(PROBE).href}`],
    },
    core,
  );
  try {
    const requests = meRequests(options.users, (server.extra as BenchSession[] | undefined) ?? null);
    const send = (amount: number) => sendExactly(server, requests, amount, options.connections);
    await send(settings.warmup);
    process.kill(server.pid, 'SIGUSR2');
    const measured = await send(settings.requests);
    process.kill(server.pid, 'SIGUSR2');
    const window = await readProbe(probeFile);
    const sent = Math.max(1, measured.requests.total);
    let failures = measured.non2xx + measured.errors;
    let syscalls: Record<string, number> = {};
    if (!noStrace) {
      const counted = await underStrace(server.pid, join(dir, `${target.name}.strace`), () =>
        send(settings.syscallRequests),
      );
      failures += counted.result.non2xx + counted.result.errors;
      const total = Math.max(1, counted.result.requests.total);
      syscalls = Object.fromEntries(Object.entries(counted.calls).map(([name, n]) => [name, n / total]));
    }
    const collections = Object.fromEntries(
      Object.entries(window.collections).map(([kind, { count, micros }]) => [
        kind,
        { per1000: (1000 * count) / sent, microsPerRequest: micros / sent },
      ]),
    );
    const row = {
      name: target.name,
      label: target.label,
      syscalls,
      allocatedBytes: window.allocatedBytes / sent,
      collections,
      cpuMicros: window.cpuMicros / sent,
      liveAfterFullGc: window.liveAfterFullGc ?? 0,
      failures,
    };
    log(`breakdown: ${target.name}: ${JSON.stringify(row)}`);
    return row;
  } finally {
    await server.stop();
  }
}

/** Waits for the probe's line (the signal is handled on the target's next turn). */
async function readProbe(file: string): Promise<ProbeWindow> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    if (existsSync(file)) {
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      return JSON.parse(lines.at(-1)!) as ProbeWindow;
    }
    await sleep(50);
  }
  throw new Error(`no probe window in ${file}: was bench/lib/gc-probe.ts preloaded?`);
}

/** Runs `work` with strace counting the system calls of every thread of `pid`; the counts by name. */
async function underStrace<T>(
  pid: number,
  out: string,
  work: () => Promise<T>,
): Promise<{ result: T; calls: Record<string, number> }> {
  const strace: ChildProcess = spawn('strace', ['-c', '-f', '-o', out, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((done) => strace.once('exit', () => done()));
  // strace says "Process N attached" for each thread once it traces it.
  await new Promise<void>((attached, failed) => {
    let text = '';
    strace.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('attached')) attached();
    });
    strace.once('exit', () => failed(new Error(`strace exited: ${text}`)));
  });
  await sleep(200);
  const result = await work();
  strace.kill('SIGINT');
  await exited;
  return { result, calls: parseStraceSummary(readFileSync(out, 'utf8')) };
}

/** strace -c's table: `% time  seconds  usecs/call  calls  [errors]  syscall`, then a total line. */
export function parseStraceSummary(text: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    const name = fields.at(-1)!;
    if (!/^\d/.test(fields[0] ?? '') || name === 'total' || fields.length < 5) continue;
    calls[name] = (calls[name] ?? 0) + Number(fields[3]);
  }
  return calls;
}

const WRITES = ['write', 'writev', 'pwrite64', 'sendto', 'sendmsg'];
const READS = ['read', 'readv', 'recvfrom', 'recvmsg'];

export function breakdownTable(rows: readonly BreakdownRow[]): string {
  const sum = (calls: Record<string, number>, names?: readonly string[]) =>
    Object.entries(calls)
      .filter(([name]) => !names || names.includes(name))
      .reduce((total, [, n]) => total + n, 0);
  const others = (calls: Record<string, number>) =>
    Object.entries(calls)
      .filter(([name]) => !WRITES.includes(name) && !READS.includes(name))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .filter(([, n]) => n >= 0.01)
      .map(([name, n]) => `${name} ${n.toFixed(2)}`)
      .join(', ');
  const gc = (row: BreakdownRow, kind: string) => row.collections[kind]?.per1000 ?? 0;
  const gcMicros = (row: BreakdownRow) =>
    Object.values(row.collections).reduce((total, c) => total + c.microsPerRequest, 0);
  return table(
    [
      'Target',
      'system calls / request',
      'writes',
      'reads',
      'most of the rest',
      'scavenges / 1000 requests',
      'full collections / 1000 requests',
      'GC µs / request',
      'allocated KB / request',
      'CPU µs / request (context)',
      'errors / non-2xx',
    ],
    rows.map((r) => [
      r.label,
      sum(r.syscalls).toFixed(2),
      sum(r.syscalls, WRITES).toFixed(2),
      sum(r.syscalls, READS).toFixed(2),
      others(r.syscalls),
      gc(r, 'Scavenge').toFixed(2),
      gc(r, 'MarkSweepCompact').toFixed(2),
      gcMicros(r).toFixed(2),
      (r.allocatedBytes / 1024).toFixed(1),
      r.cpuMicros.toFixed(1),
      String(r.failures),
    ]),
  );
}
