// npm run bench: every target in its own pinned process, the same load, interleaved rounds, one guard.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  type BenchTarget,
  benchDataDirs,
  comparisonTargets,
  NEVER_REFUSES,
  SESSION_CACHE_TTL,
  selected,
} from './lib/catalogue.ts';
import { measure, sendExactly } from './lib/load.ts';
import { describeMachine, pinProcess } from './lib/machine.ts';
import { renderRun, writeBenchmarksMd } from './lib/markdown.ts';
import { options, QUICK_TARGETS } from './lib/options.ts';
import type { Phase, RunContext } from './lib/phase.ts';
import { countRedisWork, openBenchRedis } from './lib/redis.ts';
import { guardTable, type TripRow, targetsTable, tripsTable } from './lib/report.ts';
import { meRequests } from './lib/requests.ts';
import { checkGuard, type InstructionRow, type Results } from './lib/results.ts';
import type { BenchSession } from './lib/serve.ts';
import { type Row, summarise } from './lib/summary.ts';
import { TargetProcess } from './lib/target-process.ts';
import { breakdownPhase } from './phases/breakdown.ts';
import { floodPhase } from './phases/flood.ts';
import { instructionsPhase } from './phases/instructions.ts';

interface Running {
  readonly target: BenchTarget;
  readonly process: TargetProcess;
  readonly requests: ReturnType<typeof meRequests>;
}

/** The targets table: every target, CPU per request over interleaved rounds. */
const targetsPhase: Phase = {
  name: 'targets',
  async run(context) {
    const rows = await interleave(runTargets(context), context);
    if (rows.length === 0) return null;
    return {
      data: rows,
      markdown: [
        '### `GET /api/auth/me` as a signed-in user, budget never refused',
        '',
        targetsTable(rows),
      ].join('\n'),
    };
  },
};

/** Redis commands and round trips per decision of each Redis target, under the same load. */
const redisTripsPhase: Phase = {
  name: 'redis-trips',
  async run(context) {
    const { redis } = context;
    const targets = runTargets(context).filter((t) => t.store === 'redis');
    if (!redis || targets.length === 0) return null;
    const rows: TripRow[] = [];
    await withTargets(targets, context, async (running) => {
      for (const r of running) {
        await sendExactly(r.process, r.requests, 200, 10); // scripts loaded, connections warm
        const count = await countRedisWork(redis.url, options.tripRequests, async () => {
          await sendExactly(r.process, r.requests, options.tripRequests, options.connections);
        });
        context.log(`redis ${r.target.name}: ${count.roundTrips.toFixed(2)} round trips per decision`);
        rows.push({ name: r.target.name, label: r.target.label, ...count });
      }
    });
    return {
      data: rows,
      markdown: [
        `### Redis work per decision (${options.tripRequests} decisions over ${options.connections} connections; MONITOR, INFO commandstats and INFO stats)`,
        '',
        tripsTable(rows),
      ].join('\n'),
      brief: null, // in the run's own file, not BENCHMARKS.md
    };
  },
};

/**
 * The phases of a run, in order (BENCH_ONLY=name,… runs some of them). A new phase is a module
 * under bench/ exporting a `Phase`, added to this list.
 */
const PHASES: readonly Phase[] = [
  targetsPhase,
  instructionsPhase,
  breakdownPhase,
  redisTripsPhase,
  floodPhase,
];

const log = (message: string) => console.error(`[bench] ${message}`);
const machine = describeMachine();
if (machine.pinning) pinProcess(process.pid, machine.pinning.load);
const phases = options.quick
  ? [targetsPhase]
  : PHASES.filter((phase) => options.only.length === 0 || options.only.includes(phase.name));

const started = performance.now();
const results: Results = {
  date: new Date().toISOString(),
  command: commandLine(),
  machine,
  settings: options,
  sessionCache: `looked up in the database once per cookie, then served from each instance's cache for SESSION_CACHE_TTL=${SESSION_CACHE_TTL || '5m (the default on the embedded database)'}`,
  phases: {},
  notes: [],
};
const redis = options.quick ? null : await openBenchRedis(options.redisUrl, machine.pinning?.load ?? null);
if (!options.quick && !redis) results.notes.push('No Redis answered: the Redis targets were left out.');
if (redis && !redis.private)
  results.notes.push('Redis was shared (BENCH_REDIS_URL): its command counts may include other clients.');
const context: RunContext = { redis, serverCore: machine.pinning?.server ?? null, log, notes: results.notes };

/** Every phase's tables (the console, bench/runs/), and BENCHMARKS.md's shorter share of them. */
const sections: string[] = [];
const briefs: string[] = [];
/** The guard follows the phase it is judged on: instructions when that phase ran, else the targets' CPU time. */
let guardAt = -1;
let briefGuardAt = -1;
try {
  for (const phase of phases) {
    log(`phase ${phase.name}`);
    const outcome = await phase.run(context);
    if (!outcome) continue;
    results.phases[phase.name] = outcome.data;
    sections.push(outcome.markdown);
    const brief = outcome.brief === undefined ? outcome.markdown : outcome.brief;
    if (brief !== null) briefs.push(brief);
    if (phase === targetsPhase || phase === instructionsPhase) {
      guardAt = sections.length;
      briefGuardAt = briefs.length;
    }
  }
} finally {
  await redis?.stop();
  for (const dir of benchDataDirs()) rmSync(dir, { recursive: true, force: true });
}

if (guardAt >= 0) {
  const guard = checkGuard(
    results.phases.instructions as InstructionRow[] | undefined,
    results.phases.targets as Row[] | undefined,
  );
  const table = ['### Guard', '', guardTable(guard)].join('\n');
  sections.splice(guardAt, 0, table);
  briefs.splice(briefGuardAt, 0, table);
}
const minutes = (performance.now() - started) / 60_000;
results.notes.push(`The run took ${minutes.toFixed(0)} min.`);
const section = renderRun(results, sections);
console.log(section);
// Every run is kept under bench/runs/ (ignored by git), its data and all its tables. A complete run
// also replaces the latest run in BENCHMARKS.md (its brief tables) and bench/benchmarks-run.json,
// the one run kept in the repository.
const stamp = results.date.slice(0, 16).replace(/:/g, '');
const runsDir = fileURLToPath(new URL('./runs/', import.meta.url));
mkdirSync(runsDir, { recursive: true });
const file = `${runsDir}${stamp}.json`;
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(`${runsDir}${stamp}.md`, `${section}\n`);
const complete = phases.length === PHASES.length && options.targets.length === 0;
if (complete) {
  writeBenchmarksMd(renderRun(results, briefs));
  copyFileSync(file, fileURLToPath(new URL('./benchmarks-run.json', import.meta.url)));
}
log(
  `results: bench/runs/${stamp}.json and .md${complete ? ', BENCHMARKS.md and bench/benchmarks-run.json updated' : ''}`,
);
// Stray keep-alive sockets of the load generator must not keep the driver waiting.
process.exit(0);

/** The targets of this run: all, BENCH_TARGETS' or the quick run's. */
function runTargets({ redis }: RunContext): BenchTarget[] {
  const all = comparisonTargets(NEVER_REFUSES, options.users, redis?.url ?? null);
  return options.quick
    ? all.filter((t) => (QUICK_TARGETS as readonly string[]).includes(t.name))
    : selected(all, options.targets);
}

/** Starts the targets one by one (a target that fails to start is noted and left out), runs `work`, stops them. */
async function withTargets(
  targets: BenchTarget[],
  { serverCore, notes }: RunContext,
  work: (running: Running[]) => Promise<void>,
): Promise<void> {
  const running: Running[] = [];
  try {
    for (const target of targets) {
      log(`starting ${target.name}`);
      try {
        const server = await TargetProcess.start(target, serverCore);
        // Ours and the stacks sign their users in and hand over the cookies; the others know users by id.
        const sessions = (server.extra as BenchSession[] | undefined) ?? null;
        running.push({ target, process: server, requests: meRequests(options.users, sessions) });
      } catch (error) {
        const note = `${target.label} did not start: ${String((error as Error).message).split('\n')[0]}`;
        if (!notes.includes(note)) notes.push(note);
        log(String(error));
      }
    }
    await work(running);
  } finally {
    await Promise.all(running.map((r) => r.process.stop()));
  }
}

/**
 * Every target once per round, each round on fresh processes: started in an order rotated by one
 * from the last round's, measured in that order, stopped. Why not one process per target for the
 * whole run: identical servers started one after another measure apart by a few µs per request,
 * and each keeps its own figure round after round; a median over rounds is a median over processes.
 */
async function interleave(targets: BenchTarget[], context: RunContext): Promise<Row[]> {
  const settings = { duration: options.duration, warmup: options.warmup, connections: options.connections };
  const samples = new Map(targets.map((t) => [t, [] as Awaited<ReturnType<typeof measure>>[]]));
  for (let round = 1; round <= options.rounds; round++) {
    const shift = (round - 1) % targets.length;
    const order = [...targets.slice(shift), ...targets.slice(0, shift)];
    await withTargets(order, context, async (running) => {
      for (const r of running) {
        const m = await measure(r.process, r.requests, settings);
        samples.get(r.target)!.push(m);
        log(
          `round ${round}/${options.rounds} ${r.target.name.padEnd(28)} ${m.rps.toFixed(0).padStart(6)} req/s  ` +
            `p99 ${m.p99.toFixed(1)} ms  ${m.cpuMicrosPerRequest.toFixed(1)} µs/req  non-2xx ${m.non2xx}  errors ${m.errors}`,
        );
      }
    });
  }
  return targets.filter((t) => samples.get(t)!.length > 0).map((t) => summarise(t, samples.get(t)!));
}

/** The command that reproduces this run: the bench's environment knobs, then npm run bench. */
function commandLine(): string {
  const knobs = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${value}`)
    .sort();
  return [...knobs, 'npm run bench'].join(' ');
}
