// npm run bench: every target in its own pinned process, the same load, interleaved rounds, one table.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { measureCapacity } from './capacity.ts';
import { floodSettings, runFlood } from './flood.ts';
import { measureFootprint } from './footprint.ts';
import {
  type BenchTarget,
  benchDataDirs,
  comparisonTargets,
  EXHAUSTED,
  NEVER_REFUSES,
  oursEnv,
  SESSION_CACHE_TTL,
  selected,
} from './lib/catalogue.ts';
import { measure, type RunSettings, sendExactly } from './lib/load.ts';
import { describeMachine, pinProcess } from './lib/machine.ts';
import { renderResults, writeBenchmarksMd } from './lib/markdown.ts';
import { options, PHASES, QUICK_TARGETS } from './lib/options.ts';
import { openBenchSchema } from './lib/postgres.ts';
import { countRedisWork, openBenchRedis } from './lib/redis.ts';
import type { TripRow } from './lib/report.ts';
import { bulkRequests, meRequests } from './lib/requests.ts';
import type { Results } from './lib/results.ts';
import { type Row, summarise } from './lib/summary.ts';
import { TargetProcess } from './lib/target-process.ts';
import { measureAll } from './memory-per-key.ts';
import type { BenchSession } from './targets/ours.ts';

interface Running {
  readonly target: BenchTarget;
  readonly process: TargetProcess;
  requests: autocannon.Request[];
}

const log = (message: string) => console.error(`[bench] ${message}`);
const wants = (phase: (typeof options.phases)[number]) => options.phases.includes(phase);

const machine = describeMachine();
const serverCore = machine.pinning?.server ?? null;
if (machine.pinning) pinProcess(process.pid, machine.pinning.load);

const results: Results = {
  date: new Date().toISOString(),
  command: commandLine(),
  machine,
  settings: options,
  sessionCache: `looked up in the database once per cookie, then served from each instance's cache for SESSION_CACHE_TTL=${SESSION_CACHE_TTL || '5m (the default on the embedded database)'}`,
  redis: null,
  throughput: null,
  refusal: null,
  redisTrips: null,
  bulk: null,
  memory: null,
  footprint: null,
  capacity: null,
  notes: [],
};

const needsRedis =
  !options.quick && (wants('throughput') || wants('refusal') || wants('redis-trips') || wants('capacity'));
const redis = needsRedis ? await openBenchRedis(options.redisUrl, machine.pinning?.load ?? null) : null;
results.redis = redis ? { private: redis.private } : null;
if (needsRedis && !redis) results.notes.push('No Redis answered: the Redis targets were left out.');
if (redis && !redis.private)
  results.notes.push('Redis was shared (BENCH_REDIS_URL): its command counts may include other clients.');

const settings: RunSettings = {
  duration: options.duration,
  warmup: options.warmup,
  connections: options.connections,
};

try {
  if (wants('throughput') || wants('redis-trips')) {
    const all = comparisonTargets(NEVER_REFUSES, options.users, redis?.url ?? null, true);
    const targets = options.quick
      ? all.filter((t) => (QUICK_TARGETS as readonly string[]).includes(t.name))
      : selected(all, options.targets);
    if (wants('throughput')) results.throughput = await interleave(targets, settings);
    const redisTargets = targets.filter((t) => t.store === 'redis');
    if (wants('redis-trips') && redis && redisTargets.length > 0)
      await withTargets(redisTargets, async (running) => {
        results.redisTrips = await countTrips(running, redis.url);
      });
  }
  if (wants('refusal')) {
    const targets = comparisonTargets(EXHAUSTED, options.users, redis?.url ?? null, false);
    results.refusal = await interleave(selected(targets, options.targets), settings);
  }
  if (wants('bulk')) results.bulk = await bulk();
  if (wants('memory')) {
    log(`memory per key: ${options.memoryKeys} keys per store`);
    results.memory = measureAll(options.memoryKeys, serverCore);
  }
  if (wants('capacity') && redis) {
    log('capacity: Redis CPU per decision and memory per key, each control at its default budget');
    results.capacity = await measureCapacity(redis.url);
  }
  if (wants('footprint')) {
    log('footprint: time to /readyz and RSS of npm start, embedded and on PostgreSQL');
    const schema = await openBenchSchema(options.databaseUrl);
    if (!schema)
      results.notes.push('PostgreSQL did not answer: the footprint covers the embedded database only.');
    try {
      results.footprint = await measureFootprint(schema?.url ?? null);
    } finally {
      await schema?.drop();
    }
  }
  if (wants('flood')) {
    const flood = floodSettings();
    log(
      `flood: ${flood.concurrency} login attempts in flight for ${flood.durationMs / 1000} s against npm start`,
    );
    results.flood = await runFlood(flood);
  }
} finally {
  await redis?.stop();
  for (const dir of benchDataDirs()) rmSync(dir, { recursive: true, force: true });
}

const section = renderResults(results);
console.log(section);
if (options.quick) console.log(`\n${quickVerdict(results)}`);
const stamp = results.date.slice(0, 16).replace(/:/g, '');
const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(resultsDir, { recursive: true });
writeFileSync(`${resultsDir}${stamp}.json`, `${JSON.stringify(results, null, 2)}\n`);
// A partial run (some phases or targets only) does not replace the published table.
const complete = options.phases.length === PHASES.length && options.targets.length === 0 && !options.quick;
if (complete || process.env.BENCH_WRITE_MD === '1') writeBenchmarksMd(section);
log(`results: bench/results/${stamp}.json${complete ? ', BENCHMARKS.md updated' : ''}`);
// Stray keep-alive sockets of the load generator must not keep the driver waiting.
process.exit(0);

/** Starts the targets one by one (a target that fails to start is noted and left out), runs `work`, stops them. */
async function withTargets(
  targets: BenchTarget[],
  work: (running: Running[]) => Promise<void>,
): Promise<void> {
  const running: Running[] = [];
  try {
    for (const target of targets) {
      log(
        `starting ${target.name}${target.family === 'ours' ? ` (adding and logging in ${target.env?.BENCH_USERS} users)` : ''}`,
      );
      try {
        running.push({ target, process: await TargetProcess.start(target, serverCore), requests: [] });
      } catch (error) {
        const note = `${target.label} did not start: ${String((error as Error).message).split('\n')[0]}`;
        if (!results.notes.includes(note)) results.notes.push(note);
        log(String(error));
      }
    }
    const oursSessions = (r: Running) => r.process.extra as BenchSession[];
    const anyOurs = running.find((r) => r.target.family === 'ours');
    const shared = meRequests(options.users, anyOurs ? oursSessions(anyOurs) : null);
    for (const r of running)
      r.requests = r.target.family === 'ours' ? meRequests(options.users, oursSessions(r)) : shared;
    await work(running);
  } finally {
    await Promise.all(running.map((r) => r.process.stop()));
  }
}

/**
 * Every target once per round, each round on fresh processes: started in an order rotated by one
 * from the last round's, measured in that order, stopped. Why not one process per target for the
 * whole run: identical servers started one after another measure apart by up to 3.5 µs per request,
 * and each keeps its own figure round after round (BENCHMARKS.md, "Reading the numbers"); a
 * median over rounds is then a median over processes.
 */
async function interleave(
  targets: BenchTarget[],
  runSettings: RunSettings,
  requestsFor?: (running: Running) => autocannon.Request[],
): Promise<Row[]> {
  const samples = new Map(targets.map((t) => [t, [] as Awaited<ReturnType<typeof measure>>[]]));
  for (let round = 1; round <= options.rounds; round++) {
    const shift = (round - 1) % targets.length;
    const order = [...targets.slice(shift), ...targets.slice(0, shift)];
    await withTargets(order, async (running) => {
      for (const r of running) {
        const m = await measure(r.process, requestsFor ? requestsFor(r) : r.requests, runSettings);
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

/** Redis commands and round trips per decision for each Redis-backed target, after a short warm-up (scripts loaded). */
async function countTrips(running: Running[], url: string): Promise<TripRow[]> {
  const rows: TripRow[] = [];
  for (const r of running.filter((x) => x.target.store === 'redis')) {
    await sendExactly(r.process, r.requests, 200, 10);
    // Under load: as many connections as the throughput runs, so decisions meet in one turn.
    const count = await countRedisWork(url, options.tripRequests, async () => {
      await sendExactly(r.process, r.requests, options.tripRequests, options.connections);
    });
    log(
      `redis ${r.target.name}: ${count.sent.toFixed(2)} commands sent, ${count.roundTrips.toFixed(2)} round trips, ${count.commands.toFixed(2)} commands run`,
    );
    rows.push({ name: r.target.name, label: r.target.label, ...count });
  }
  return rows;
}

/** p50/p99 of a 50-id bulk reassignment on the embedded database and on PostgreSQL. */
async function bulk(): Promise<Row[] | null> {
  const env = { RATE_LIMIT_BULK: `${NEVER_REFUSES.limit}/15m` };
  const base = { file: 'ours', family: 'ours', store: 'memory' } as const;
  const targets: BenchTarget[] = [
    { ...base, name: 'bulk-embedded', label: 'embedded (PGlite)', env: oursEnv({ users: 4, env }) },
  ];
  const schema = await openBenchSchema(options.databaseUrl);
  if (schema) {
    targets.push({
      ...base,
      name: 'bulk-postgres',
      label: 'PostgreSQL',
      env: oursEnv({ users: 4, databaseUrl: schema.url, env }),
    });
  } else {
    results.notes.push('PostgreSQL did not answer: the bulk run covers the embedded database only.');
  }
  let rows: Row[] | null = null;
  try {
    rows = await interleave(targets, { duration: options.duration, warmup: 1, connections: 1 }, (r) =>
      bulkRequests(r.process.extra as BenchSession[], 4),
    );
  } finally {
    await schema?.drop();
  }
  return rows;
}

/** The regression guard's line: ours ÷ Fastify by CPU per request, with and without request logs. */
function quickVerdict(run: Results): string {
  const cpu = (name: string) => run.throughput?.find((r) => r.name === name)?.cpuMicrosPerRequest;
  const bare = cpu('fastify-bare');
  const lines = ['ours-memory', 'ours-memory-quiet'].map((name) => {
    const ours = cpu(name);
    return ours && bare
      ? `${name}: ${(ours / bare).toFixed(2)}× Fastify (${ours.toFixed(1)} µs vs ${bare.toFixed(1)} µs CPU per request)`
      : `${name}: not measured`;
  });
  return ['Quick check (target: ours · memory ≤ 1.25× Fastify):', ...lines].join('\n');
}

/** The command that reproduces this run: the bench's environment knobs, then npm run bench. */
function commandLine(): string {
  const knobs = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_') && name !== 'BENCH_WRITE_MD')
    .map(([name, value]) => `${name}=${value}`)
    .sort();
  return [...knobs, 'npm run bench'].join(' ');
}
