// The instructions phase of npm run bench: user-space instructions per request of the guard's rows.
//
// CPU time per request on a shared machine moves by half between rounds of one run; the
// instructions a server executes for a request do not. Valgrind's callgrind counts every
// instruction of the process in user space (Node, V8's generated code, libuv, libc), whatever else
// the machine does; not the kernel's (the socket calls, alike for every server).
//
// Per target: start it under callgrind with instrumentation off (a start runs about ten times
// slower), send BENCH_INSTR_WARMUP requests so V8 optimises the hot path, then more, 2,500 at a
// time, until V8 has run a full collection (at most BENCH_INSTR_SETTLE; below), switch
// instrumentation on, send 500 more (valgrind rebuilds its translations), zero the counters, then
// BENCH_INSTR_SAMPLES times send BENCH_INSTR_REQUESTS requests and dump. A sample's figure is its
// instructions per request without V8's optimising compilers (they still run now and then, when a
// function gets hot late) and without Node's nextTick slow path (below); a process's figure is
// the same over all its samples' requests. V8's garbage collector runs on a fixed schedule
// (below). The start and the warm-up leave garbage in the old space (replaced code, the first
// requests' objects), and the full collection that clears it would land in a sample and count the
// start against the steady state; settling first makes every run count the same state: between
// full collections, the steady state's cost (the CPU-time rows carry the collections at full
// speed). The warm-up is long enough that V8's late re-optimising of Node's stream code falls in
// it, for every target alike. Measured: BENCHMARKS.md, and the commits that set these numbers.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchTarget, SESSION_CACHE_TTL } from '../lib/catalogue.ts';
import { guardTargets } from '../lib/guard-rows.ts';
import { median, sendExactly } from '../lib/load.ts';
import { int, options } from '../lib/options.ts';
import type { Phase } from '../lib/phase.ts';
import { table } from '../lib/report.ts';
import { meRequests } from '../lib/requests.ts';
import type { InstructionRow } from '../lib/results.ts';
import type { BenchSession } from '../lib/serve.ts';
import type { TargetProcess } from '../lib/target-process.ts';

const settings = {
  warmup: int('BENCH_INSTR_WARMUP', 60_000),
  requests: int('BENCH_INSTR_REQUESTS', 5_000),
  samples: int('BENCH_INSTR_SAMPLES', 3),
  /** After the warm-up, at most this many more requests until a full collection (below). */
  settleLimit: int('BENCH_INSTR_SETTLE', 150_000),
  connections: int('BENCH_INSTR_CONNECTIONS', 10),
  /** Processes of ours · redis, each counted apart: the guard takes the costliest. */
  redisProcesses: int('BENCH_INSTR_REDIS_PROCESSES', 3),
  /** Processes of the floor, each counted apart: the guard takes the cheapest. */
  floorProcesses: int('BENCH_INSTR_FLOOR_PROCESSES', 2),
};
/**
 * A process can draw its cost at start (a full collection caught or not, re-optimising still under
 * way in its samples): ours on Redis and the floor are counted in several processes, and the guard
 * sets the floor's cheapest against ours' costliest (results.ts).
 */
function processesOf(target: BenchTarget): number {
  if (target.family === 'floor') return settings.floorProcesses;
  if (target.family === 'ours' && target.store === 'redis') return settings.redisProcesses;
  return 1;
}

/** Requests between two looks at the old space while settling. */
const SETTLE_STEP = 2_500;
/** BENCH_INSTR_KEEP=1 keeps the dumps, for callgrind_annotate (by function, callers, callees). */
const KEEP = process.env.BENCH_INSTR_KEEP === '1';

/** V8's optimising compilers (TurboFan, Turboshaft, Maglev, Sparkplug): a third more in a sample that caught them. */
const JIT_COMPILER = /v8::internal::(compiler|maglev|turboshaft|baseline)::/;
/** V8's full (mark-compact) collections: marking, sweeping, evacuation, pointer updates. */
const FULL_GC =
  /v8::internal::(ConcurrentMarking|MarkCompactCollector|MarkingVisitorBase|ConcurrentMarkingVisitor|MainMarkingVisitor|Sweeper|MarkingWorklists|IncrementalMarking|MarkingBarrier|PointersUpdatingVisitor|Evacuat)/;
/**
 * Node's process.nextTick builds its tick object as a literal with two computed symbol keys; some
 * processes define them through this runtime function on every call, others of the same server
 * never do. A draw at start, kept for the process's life.
 */
const NEXT_TICK_SLOW_PATH = 'Runtime_DefineKeyedOwnPropertyInLiteral';

function valgrindMissing(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-h'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

export const instructionsPhase: Phase = {
  name: 'instructions',
  async run(context) {
    if (valgrindMissing()) {
      context.notes.push(
        'valgrind is missing: no instructions per request, the guard judged CPU time per request.',
      );
      return null;
    }
    // Under callgrind a target runs about fifty times slower: the session cache's lifetime, wall
    // time, would run out mid-run and put a database lookup per user into the samples.
    const chosen = await guardTargets(context.redis?.url ?? null, {
      SESSION_CACHE_TTL: SESSION_CACHE_TTL || '24h',
    });
    if (chosen.length === 0) return null;
    const dir = mkdtempSync(join(tmpdir(), 'tp-callgrind-'));
    const rows: InstructionRow[] = [];
    try {
      for (const { target, start } of chosen) {
        const processes = processesOf(target);
        const counted: InstructionRow[] = [];
        for (let p = 0; p < processes; p++) counted.push(await count(target, start, dir, context.log));
        rows.push(mergeProcesses(counted));
      }
    } finally {
      if (KEEP) context.log(`callgrind dumps kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    }
    return {
      data: rows,
      markdown: [
        `### Instructions per request (callgrind; ${settings.samples} samples of ${settings.requests} requests ` +
          `after ${settings.warmup} unrecorded, ${settings.connections} connections, ours · redis in ${settings.redisProcesses} processes, the floor in ${settings.floorProcesses}; V8's optimising compilers and Node's nextTick slow path left out)`,
        '',
        instructionsTable(rows),
      ].join('\n'),
    };
  },
};

/** One target under callgrind: warm-up, then the samples; its row. */
async function count(
  target: BenchTarget,
  start: typeof TargetProcess.start,
  dir: string,
  log: (message: string) => void,
): Promise<InstructionRow> {
  const out = join(dir, target.name);
  const launcher = [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${out}.%p`,
    '--quiet',
  ];
  // V8 sizes its young generation and schedules full collections partly by the clock, which
  // under callgrind runs fifty times slower: the same server then collected more often in one
  // run than in another, and a sample that caught a full collection read far more. A fixed
  // schedule makes the count depend on the requests only.
  const nodeArgs = ['--predictable-gc-schedule'];
  // Kept dumps get V8's map of its generated code (/tmp/perf-<pid>.map, moved beside them) to name JS functions.
  if (KEEP) nodeArgs.push('--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${out}.v8.log`);
  log(`instructions: starting ${target.name} under callgrind`);
  const server = await start(
    { ...target, launcher, nodeArgs: [...(target.nodeArgs ?? []), ...nodeArgs] },
    null,
  );
  const control = (...args: string[]) =>
    execFileSync('callgrind_control', [...args, String(server.pid)], { stdio: 'ignore' });
  try {
    const requests = meRequests(options.users, (server.extra as BenchSession[] | undefined) ?? null);
    await sendExactly(server, requests, settings.warmup, settings.connections);
    const settled = await untilFullCollection(server, requests);
    log(
      settled === null
        ? `instructions: ${target.name}: no full collection in ${settings.settleLimit} more requests`
        : `instructions: ${target.name}: full collection after ${settled} more requests`,
    );
    control('-i', 'on');
    await sendExactly(server, requests, 500, settings.connections);
    control('-z');
    const samples: { perRequest: number; tick: number }[] = [];
    let counted = 0;
    let sentAll = 0;
    let fullGc = 0;
    let failures = 0;
    for (let sample = 1; sample <= settings.samples; sample++) {
      const result = await sendExactly(server, requests, settings.requests, settings.connections);
      failures += result.non2xx + result.errors;
      control('-d');
      const dump = readDump(`${out}.${server.pid}.${sample}`);
      const sent = result.requests.total;
      counted += dump.total - dump.compiler - dump.tick;
      sentAll += sent;
      fullGc += dump.fullGc;
      samples.push({ perRequest: (dump.total - dump.compiler - dump.tick) / sent, tick: dump.tick / sent });
      log(
        `instructions: ${target.name} sample ${sample}/${settings.samples}: ${Math.round(samples.at(-1)!.perRequest)} per request ` +
          `(+ ${Math.round(dump.compiler / sent)} compiling, + ${Math.round(dump.tick / sent)} nextTick slow path; ` +
          `${Math.round(dump.fullGc / sent)} of it full collections)`,
      );
    }
    return {
      name: target.name,
      label: target.label,
      // Over all the samples, not their median: a full collection every few thousand requests
      // then counts by its share of requests, where a median
      // of short samples read high or low by whether the middle one caught one.
      perRequest: counted / Math.max(1, sentAll),
      samples: samples.map((s) => s.perRequest),
      tickSlowPath: median(samples.map((s) => s.tick)),
      fullGcPerRequest: fullGc / Math.max(1, sentAll),
      failures,
    };
  } finally {
    await server.stop();
    const map = `/tmp/perf-${server.pid}.map`;
    if (existsSync(map)) renameSync(map, `${out}.${server.pid}.perf.map`);
  }
}

/**
 * Sends requests, uncounted, until V8 has run a full collection (its old space shrank; a target
 * reports it with its stats), at most BENCH_INSTR_SETTLE: the requests after it then hold no
 * garbage of the start and the warm-up. Returns how many it took, or null when none ran.
 */
async function untilFullCollection(
  server: TargetProcess,
  requests: ReturnType<typeof meRequests>,
): Promise<number | null> {
  let before = (await server.stats()).oldSpaceUsed;
  for (let sent = 0; sent < settings.settleLimit; ) {
    const result = await sendExactly(server, requests, SETTLE_STEP, settings.connections);
    sent += result.requests.total;
    const now = (await server.stats()).oldSpaceUsed;
    if (now < before) return sent;
    before = now;
  }
  return null;
}

/** One row from one target's processes: the median process, every process's figure, every sample. */
function mergeProcesses(rows: readonly InstructionRow[]): InstructionRow {
  const byProcess = rows.map((r) => r.perRequest);
  return {
    ...rows[0]!,
    perRequest: median(byProcess),
    byProcess,
    samples: rows.flatMap((r) => r.samples),
    tickSlowPath: median(rows.map((r) => r.tickSlowPath)),
    fullGcPerRequest: median(rows.map((r) => r.fullGcPerRequest ?? 0)),
    failures: rows.reduce((total, r) => total + r.failures, 0),
  };
}

/** A dump's instructions: all, V8's optimising compilers' (self), full collections' (self), the nextTick slow path's (with its callees). */
function readDump(file: string): { total: number; compiler: number; tick: number; fullGc: number } {
  const annotate = (...args: string[]) =>
    execFileSync('callgrind_annotate', ['--threshold=100', '--auto=no', ...args, file], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    }).split('\n');
  const counted = (line: string) =>
    Number(/^\s*([\d,]+) /.exec(line)?.[1]?.replaceAll(',', '') ?? Number.NaN);
  let total = Number.NaN;
  let compiler = 0;
  let fullGc = 0;
  let tick = 0;
  for (const line of annotate()) {
    if (line.includes('PROGRAM TOTALS')) total = counted(line);
    else if (JIT_COMPILER.test(line)) compiler += counted(line) || 0;
    else if (FULL_GC.test(line)) fullGc += counted(line) || 0;
    else if (line.includes(NEXT_TICK_SLOW_PATH)) tick = -1; // ran: its inclusive cost below
  }
  if (Number.isNaN(total)) throw new Error(`callgrind_annotate read no totals from ${file}`);
  if (tick < 0)
    tick = counted(annotate('--inclusive=yes').find((l) => l.includes(NEXT_TICK_SLOW_PATH)) ?? '') || 0;
  return { total, compiler, tick, fullGc };
}

function instructionsTable(rows: readonly InstructionRow[]): string {
  const k = (n: number) => `${(n / 1000).toFixed(1)} k`;
  return table(
    [
      'Target',
      'instructions / request',
      'by process',
      'samples',
      'of it full collections',
      "Node's nextTick slow path (left out)",
      'errors / non-2xx',
    ],
    rows.map((r) => [
      r.label,
      k(r.perRequest),
      (r.byProcess ?? [r.perRequest]).map(k).join(', '),
      r.samples.map(k).join(', '),
      k(r.fullGcPerRequest ?? 0),
      k(r.tickSlowPath),
      String(r.failures),
    ]),
  );
}
