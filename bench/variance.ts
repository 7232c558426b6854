// npm run bench:variance: identical servers of ours, started one after another, measured in turn: the spread between processes.
//
//   BENCH_VARIANCE_SERVERS=4 BENCH_ROUNDS=2 npm run bench:variance
//
// Every server is the same checkout with the same settings (ours · memory). Each round measures
// each server once, in an order rotated from the last round's. A server that keeps its figure from
// round to round while its twins keep theirs, apart, shows that one process is one draw: why every
// round of `npm run bench` starts fresh processes. The driver first loads a raw node:http server,
// so that no ours server meets a cold load generator.
import { readFileSync, rmSync } from 'node:fs';
import { benchDataDirs, NEVER_REFUSES, oursEnv } from './lib/catalogue.ts';
import { measure } from './lib/load.ts';
import { describeMachine, pinProcess } from './lib/machine.ts';
import { options } from './lib/options.ts';
import { meRequests } from './lib/requests.ts';
import { TargetProcess } from './lib/target-process.ts';
import type { BenchSession } from './targets/ours.ts';

const machine = describeMachine();
if (machine.pinning) pinProcess(process.pid, machine.pinning.load);
const core = machine.pinning?.server ?? null;
const count = Math.max(2, Number(process.env.BENCH_VARIANCE_SERVERS) || 4);
const settings = { duration: options.duration, warmup: options.warmup, connections: options.connections };
const budget = { RATE_LIMIT_AUTHENTICATED: `${NEVER_REFUSES.limit}/${NEVER_REFUSES.windowMs}ms` };

/** Context switches of a process, from /proc (Linux): a server woken more often would show here. */
function switches(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return field('voluntary_ctxt_switches') + field('nonvoluntary_ctxt_switches');
  } catch {
    return Number.NaN;
  }
}

const servers: TargetProcess[] = [];
const figures = new Map<TargetProcess, number[]>();
try {
  const raw = await TargetProcess.start({ name: 'raw', file: 'raw-http' }, core);
  await measure(raw, meRequests(options.users, null), settings);
  await raw.stop();
  for (let i = 0; i < count; i++) {
    const env = oursEnv({ users: options.users, redisUrl: null, env: budget });
    const server = await TargetProcess.start({ name: `ours-${i + 1}`, file: 'ours', env }, core);
    console.log(`[variance] started ${server.spec.name} (pid ${server.pid})`);
    servers.push(server);
    figures.set(server, []);
  }
  for (let round = 0; round < options.rounds; round++) {
    const shift = round % servers.length;
    for (const server of [...servers.slice(shift), ...servers.slice(0, shift)]) {
      const before = switches(server.pid);
      const run = await measure(server, meRequests(options.users, server.extra as BenchSession[]), settings);
      const perRequest = (switches(server.pid) - before) / run.requests;
      figures.get(server)!.push(run.cpuMicrosPerRequest);
      console.log(
        `[variance] round ${round + 1}/${options.rounds} ${server.spec.name} ${run.cpuMicrosPerRequest.toFixed(2)} µs/req  ` +
          `${run.rps.toFixed(0)} req/s  context switches/req ${perRequest.toFixed(4)}`,
      );
    }
  }
  const all = [...figures.values()].flat();
  for (const [server, values] of figures)
    console.log(`[variance] ${server.spec.name}: ${values.map((v) => v.toFixed(2)).join(', ')} µs/req`);
  console.log(
    `[variance] spread between servers: ${Math.min(...all).toFixed(2)}–${Math.max(...all).toFixed(2)} µs/req`,
  );
} finally {
  for (const server of servers) await server.stop();
  for (const dir of benchDataDirs()) rmSync(dir, { recursive: true, force: true });
}
