// npm run bench:instructions: instructions each server executes per request, counted by valgrind, not timed.
//
// CPU time per request moves with the machine: on a shared host the same server measured 41 and
// 82 µs in two rounds of one run (BENCHMARKS.md). The instructions a server runs for a request do
// not: callgrind counts every instruction the process executes in user space (Node, V8's generated
// code, libuv, libc), whatever else the machine is doing. It does not count the kernel (the
// socket syscalls every target makes alike), so ratios here are of the work our code and the
// libraries do, not of CPU time; that is their point.
//
// Per target: start it under callgrind with instrumentation off (a start runs at about a tenth of
// native speed), warm it up with BENCH_INSTR_WARMUP requests so V8 has optimised the hot path,
// switch instrumentation on, send a few hundred more, zero the counters, then BENCH_INSTR_SAMPLES
// times: send BENCH_INSTR_REQUESTS requests and dump. The figure is the median of the samples,
// without V8's compilers (they run now and then, whenever something gets hot late) and shown with
// and without Node's nextTick slow path, which some processes of a server draw and others do not.
// Each target's top functions name V8's generated code from the map --perf-basic-prof writes.

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDataDirs, comparisonTargets, NEVER_REFUSES, selected } from './lib/catalogue.ts';
import { JitSymbols } from './lib/jit-symbols.ts';
import { median, sendExactly } from './lib/load.ts';
import { int } from './lib/options.ts';
import { openBenchRedis } from './lib/redis.ts';
import { table } from './lib/report.ts';
import { meRequests } from './lib/requests.ts';
import { TargetProcess } from './lib/target-process.ts';
import type { BenchSession } from './targets/ours.ts';

const settings = {
  warmup: int('BENCH_INSTR_WARMUP', 30_000),
  requests: int('BENCH_INSTR_REQUESTS', 5_000),
  samples: int('BENCH_INSTR_SAMPLES', 3),
  connections: int('BENCH_INSTR_CONNECTIONS', 10),
  users: int('BENCH_USERS', 1000),
  /** How many functions each target's top table lists (by self instructions per request). */
  top: int('BENCH_INSTR_TOP', 15),
};
/** The rows, in table order; BENCH_TARGETS narrows them as in `npm run bench`. */
const DEFAULT_TARGETS = [
  'fastify-bare',
  'fastify-logs',
  'fastify-contract',
  'fastify-contract-logs',
  'fastify-rate-limit-memory',
  'ours-memory',
  'ours-memory-quiet',
  'fastify-rate-limit-redis',
  'ours-redis',
];

function valgrindMissing(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-h'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

if (valgrindMissing()) {
  console.error('[instructions] needs valgrind (callgrind and callgrind_control): apt-get install valgrind');
  process.exit(1);
}

/** BENCH_INSTR_KEEP=1 keeps the dumps and V8's code maps, for callgrind_annotate (callers, callees). */
const keep = process.env.BENCH_INSTR_KEEP === '1';
const outDir = mkdtempSync(join(tmpdir(), 'tp-callgrind-'));
const redis = await openBenchRedis(process.env.BENCH_REDIS_URL || null, null);
const filter = (process.env.BENCH_TARGETS ?? '').split(',').filter(Boolean);
/** BENCH_INSTR_TARGETS: exactly these rows, by name (BENCH_TARGETS matches parts of names). */
const exact = (process.env.BENCH_INSTR_TARGETS ?? '').split(',').filter(Boolean);
const all = comparisonTargets(NEVER_REFUSES, settings.users, redis?.url ?? null, true);
const targets = selected(
  (exact.length > 0 ? exact : DEFAULT_TARGETS).flatMap((name) => all.filter((t) => t.name === name)),
  filter,
);

/** Sends `command` to the valgrind'd process (callgrind_control talks to it through vgdb). */
function control(pid: number, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });
}

/**
 * V8's optimising compilers (TurboFan, Turboshaft, Maglev, Sparkplug) run now and then for as long
 * as a process lives: a function gets hot late, or is deoptimised and compiled again. A sample
 * that caught one counted up to a third more; these functions are that work.
 */
const JIT_COMPILER = /v8::internal::(compiler|maglev|turboshaft|baseline)::/;

/**
 * Node's process.nextTick builds its tick object as a literal with two computed symbol keys. In
 * some processes V8 ends up defining those keys through the runtime on every call (the function
 * below, with map migrations under it), about 1.4 k instructions a key; other processes of the
 * same server never do. Which one a process gets is settled early and kept for its life: a draw.
 */
const NEXT_TICK_SLOW_PATH = 'Runtime_DefineKeyedOwnPropertyInLiteral';

interface Dump {
  /** Every instruction of the dump's interval. */
  readonly total: number;
  /** Those of V8's optimising compilers. */
  readonly compiler: number;
  /** Those under NEXT_TICK_SLOW_PATH (callees included). */
  readonly tickSlowPath: number;
  /** Self instructions by function, as callgrind_annotate names them. */
  readonly functions: Map<string, number>;
}

/** A callgrind dump's self cost per function (callgrind_annotate): the total, the compilers', each function's. */
function readDump(file: string): Dump {
  const text = execFileSync('callgrind_annotate', ['--threshold=100', '--auto=no', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const functions = new Map<string, number>();
  let compiler = 0;
  let total: number | null = null;
  for (const line of text.split('\n')) {
    const match = /^\s*([\d,]+) \([^)]*\)\s+(.*)$/.exec(line);
    if (!match) continue;
    const count = Number(match[1]!.replaceAll(',', ''));
    const name = match[2]!;
    if (name === 'PROGRAM TOTALS') {
      total = count;
      continue;
    }
    functions.set(name, (functions.get(name) ?? 0) + count);
    if (JIT_COMPILER.test(name)) compiler += count;
  }
  if (total === null) throw new Error(`callgrind_annotate read no totals from ${file}`);
  // The inclusive listing is a second pass over the dump: made only when the slow path ran.
  const slowPathRan = [...functions.keys()].some((name) => name.includes(NEXT_TICK_SLOW_PATH));
  return {
    total,
    compiler,
    functions,
    tickSlowPath: slowPathRan ? inclusiveOf(file, NEXT_TICK_SLOW_PATH) : 0,
  };
}

/** A function's instructions with its callees' (0 when it never ran). */
function inclusiveOf(file: string, name: string): number {
  const text = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', '--auto=no', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const line = text.split('\n').find((l) => l.includes(name));
  const match = line ? /^\s*([\d,]+) /.exec(line) : null;
  return match ? Number(match[1]!.replaceAll(',', '')) : 0;
}

/** Where this checkout is, left out of the names of its files. */
const REPOSITORY_URL = new URL('../', import.meta.url).href;
const REPOSITORY = fileURLToPath(REPOSITORY_URL);

/**
 * A function's name for the top table: a binary symbol without its file and argument list, or
 * the JS function V8 generated the code for (`???:0x…` in callgrind's view).
 */
function functionName(raw: string, symbols: JitSymbols | null): string {
  const address = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]$/.exec(raw);
  if (address) {
    const name = symbols?.nameOf(Number.parseInt(address[1]!, 16));
    return name
      ? name.replaceAll(REPOSITORY_URL, '').replaceAll(REPOSITORY, '')
      : `generated code ${raw.slice(4, -6)}`;
  }
  const symbol = raw.replace(/^[^:]*:/, '').replace(/ \[[^\]]*\]$/, '');
  const open = symbol.indexOf('(');
  return open > 0 ? symbol.slice(0, open) : symbol;
}

interface Counted {
  readonly name: string;
  readonly label: string;
  /** Per sample: instructions per request, V8's optimising compilers left out. */
  readonly perRequest: number[];
  /** Per sample: instructions per request in Node's nextTick slow path (counted in perRequest). */
  readonly tickSlowPath: number[];
  readonly non2xx: number;
  /** Self instructions per request by function over every sample (compilers' included), named. */
  readonly top: [string, number][];
}

const counted: Counted[] = [];
try {
  for (const target of targets) {
    const prefix = join(outDir, target.name);
    const launcher = [
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${prefix}.%p.out`,
      '--quiet',
    ];
    console.log(`[instructions] starting ${target.name} under callgrind`);
    // --perf-basic-prof: V8 writes where each piece of generated code is, to name it (jit-symbols.ts).
    const running = await TargetProcess.start(
      {
        ...target,
        launcher,
        // V8 also writes a log of its heap's pages with it: into this run's directory, not the cwd.
        nodeArgs: [
          ...(target.nodeArgs ?? []),
          '--perf-basic-prof',
          '--no-logfile-per-isolate',
          `--logfile=${prefix}.v8.log`,
        ],
      },
      null,
    );
    try {
      const sessions = target.family === 'ours' ? (running.extra as BenchSession[]) : null;
      const requests = meRequests(settings.users, sessions);
      await sendExactly(running, requests, settings.warmup, settings.connections);
      control(running.pid, '-i', 'on');
      // Instrumenting drops the translations valgrind had: these rebuild them before counting.
      await sendExactly(running, requests, 500, settings.connections);
      control(running.pid, '-z');
      const perRequest: number[] = [];
      const tickSlowPath: number[] = [];
      const byFunction = new Map<string, number>();
      let sent = 0;
      let non2xx = 0;
      for (let sample = 1; sample <= settings.samples; sample++) {
        const result = await sendExactly(running, requests, settings.requests, settings.connections);
        non2xx += result.non2xx + result.errors;
        control(running.pid, '-d');
        const file = `${prefix}.${running.pid}.out.${sample}`;
        if (!existsSync(file)) throw new Error(`callgrind wrote no ${file}`);
        const dump = readDump(file);
        const requestsSent = result.requests.total;
        sent += requestsSent;
        for (const [name, count] of dump.functions) byFunction.set(name, (byFunction.get(name) ?? 0) + count);
        perRequest.push((dump.total - dump.compiler) / requestsSent);
        tickSlowPath.push(dump.tickSlowPath / requestsSent);
        console.log(
          `[instructions] ${target.name} sample ${sample}/${settings.samples}: ` +
            `${Math.round(perRequest.at(-1)!).toLocaleString('en-US')} instructions/request ` +
            `(+ ${Math.round(dump.compiler / requestsSent).toLocaleString('en-US')} compiling)`,
        );
      }
      // Named after the samples: the map holds all code made until now.
      const symbols = JitSymbols.forProcess(running.pid);
      const named = new Map<string, number>();
      for (const [raw, count] of byFunction) {
        const name = functionName(raw, symbols);
        named.set(name, (named.get(name) ?? 0) + count / sent);
      }
      const top = [...named].sort((a, b) => b[1] - a[1]).slice(0, settings.top);
      counted.push({
        name: target.name,
        label: target.label,
        perRequest,
        tickSlowPath,
        non2xx,
        top,
      });
      if (keep) copyFileSync(`/tmp/perf-${running.pid}.map`, `${prefix}.${running.pid}.perf.map`);
      rmSync(`/tmp/perf-${running.pid}.map`, { force: true });
    } finally {
      await running.stop();
    }
  }
} finally {
  await redis?.stop();
  if (keep) console.log(`[instructions] callgrind dumps kept in ${outDir}`);
  else rmSync(outDir, { recursive: true, force: true });
  for (const dir of benchDataDirs()) rmSync(dir, { recursive: true, force: true });
}

/** Per sample, the instructions but those of Node's nextTick slow path: the same whatever the draw. */
const drawFree = (c: Counted) => c.perRequest.map((n, i) => n - c.tickSlowPath[i]!);
const of = (name: string) => {
  const row = counted.find((c) => c.name === name);
  return row ? median(drawFree(row)) : null;
};
const thousands = (n: number) => `${(n / 1000).toFixed(1)} k`;
const bare = of('fastify-bare');
console.log(
  `\nInstructions per request in user space (callgrind; median of ${settings.samples} samples of ` +
    `${settings.requests} requests after ${settings.warmup} unrecorded, ${settings.connections} connections; ` +
    "V8's compilers left out):\n",
);
console.log(
  table(
    [
      'Target',
      'instructions / request',
      "of which Node's nextTick slow path",
      'without it',
      '× Fastify (without it)',
      'spread',
      'errors / non-2xx',
    ],
    counted.map((c) => {
      const m = median(c.perRequest);
      const spread = (Math.max(...c.perRequest) - Math.min(...c.perRequest)) / m;
      const free = median(drawFree(c));
      return [
        c.label,
        thousands(m),
        thousands(median(c.tickSlowPath)),
        thousands(free),
        bare ? `${(free / bare).toFixed(2)}×` : '–',
        `${(spread * 100).toFixed(1)} %`,
        String(c.non2xx),
      ];
    }),
  ),
);
const differences: [string, string, string][] = [
  ['the request line (ours · memory − ours at warn)', 'ours-memory', 'ours-memory-quiet'],
  ['@fastify/rate-limit (over Fastify)', 'fastify-rate-limit-memory', 'fastify-bare'],
  ["the contract's nine headers on Fastify", 'fastify-contract', 'fastify-bare'],
  ['one request line on Fastify (ours’ writer)', 'fastify-contract-logs', 'fastify-contract'],
  ["ours beyond the contract's floor", 'ours-memory', 'fastify-contract-logs'],
  ['Redis over memory, ours', 'ours-redis', 'ours-memory'],
  ['Redis over memory, @fastify/rate-limit', 'fastify-rate-limit-redis', 'fastify-rate-limit-memory'],
];
const rows = differences.flatMap(([what, a, b]) => {
  const x = of(a);
  const y = of(b);
  return x !== null && y !== null ? [[what, thousands(x - y)]] : [];
});
if (rows.length > 0)
  console.log(`\n${table(['What (without the nextTick slow path)', 'instructions / request'], rows)}`);

for (const c of counted) {
  console.log(
    `\nTop functions of ${c.label}, self instructions per request (every sample, compilers included):\n`,
  );
  console.log(
    table(
      ['instructions', 'function'],
      c.top.map(([name, n]) => [n.toFixed(0), `\`${name.replaceAll('|', '\\|')}\``]),
    ),
  );
}
