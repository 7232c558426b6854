// node bench/header-cost.ts: what the nine headers ours adds to an answer cost node:http alone (raw, with and without them).
//
// Both servers are bench/targets/raw-http.ts, one with BENCH_OUR_HEADERS=1. Each round starts both
// as fresh processes in a rotated order (a process's figure is a draw: BENCHMARKS.md) and
// measures each once under the bench's load; the medians over rounds are printed.
import { rmSync } from 'node:fs';
import { benchDataDirs } from './lib/catalogue.ts';
import { measure, median } from './lib/load.ts';
import { describeMachine, pinProcess } from './lib/machine.ts';
import { options } from './lib/options.ts';
import { meRequests } from './lib/requests.ts';
import { TargetProcess, type TargetSpec } from './lib/target-process.ts';

const machine = describeMachine();
if (machine.pinning) pinProcess(process.pid, machine.pinning.load);
const core = machine.pinning?.server ?? null;
const settings = { duration: options.duration, warmup: options.warmup, connections: options.connections };
const specs: TargetSpec[] = [
  { name: 'raw', file: 'raw-http' },
  { name: 'raw + our nine headers', file: 'raw-http', env: { BENCH_OUR_HEADERS: '1' } },
];
const figures = new Map(specs.map((spec) => [spec, [] as number[]]));

try {
  // The load generator warms up on a throwaway server first.
  const warm = await TargetProcess.start(specs[0]!, core);
  await measure(warm, meRequests(options.users, null), settings);
  await warm.stop();
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? specs : [...specs].reverse();
    const running: [TargetSpec, TargetProcess][] = [];
    for (const spec of order) running.push([spec, await TargetProcess.start(spec, core)]);
    for (const [spec, target] of running) {
      const run = await measure(target, meRequests(options.users, null), settings);
      figures.get(spec)!.push(run.cpuMicrosPerRequest);
      console.log(
        `[headers] round ${round + 1}/${options.rounds} ${spec.name}: ${run.cpuMicrosPerRequest.toFixed(2)} µs/req`,
      );
    }
    for (const [, target] of running) await target.stop();
  }
  const [plain, more] = specs.map((spec) => median(figures.get(spec)!)) as [number, number];
  console.log(
    `[headers] medians: raw ${plain.toFixed(2)} µs/req, with our nine headers ${more.toFixed(2)} µs/req: ` +
      `${(more - plain).toFixed(2)} µs for the nine, ${((more - plain) / 9).toFixed(2)} µs each`,
  );
} finally {
  for (const dir of benchDataDirs()) rmSync(dir, { recursive: true, force: true });
}
