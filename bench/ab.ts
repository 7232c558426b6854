// npm run bench:ab: ours from two or more checkouts (or with other settings) under the bench load, interleaved rounds.
//
//   git worktree add ../before HEAD~1 && cp -r dist ../before/ && ln -s "$PWD/node_modules" ../before/
//   BENCH_AB='before=../before;after=.' npm run bench:ab
//   BENCH_AB='logs=.;quiet=.:LOG_LEVEL=warn' npm run bench:ab
//
// Each variant is `label=checkout[:NAME=value,…]`: its server is that checkout's bench/targets/ours.ts
// with those settings on top of the bench's (ours · memory, or ours · redis with BENCH_AB_REDIS=1).
// A change worth less than the full run's noise (1–2 µs between runs on a shared machine) shows
// here: the variants run side by side, each round measures every variant once, and the medians
// compare rounds taken minutes apart at most.
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchDataDirs, NEVER_REFUSES, oursEnv } from './lib/catalogue.ts';
import { measure } from './lib/load.ts';
import { describeMachine, pinProcess } from './lib/machine.ts';
import { options } from './lib/options.ts';
import { openBenchRedis } from './lib/redis.ts';
import { meRequests } from './lib/requests.ts';
import type { TargetProcess as Target } from './lib/target-process.ts';
import type { BenchSession } from './targets/ours.ts';

interface Variant {
  readonly label: string;
  readonly checkout: string;
  readonly env: Record<string, string>;
}

function parseVariants(text: string): Variant[] {
  return text
    .split(';')
    .filter(Boolean)
    .map((part) => {
      const [label, spec] = part.split(/=(.*)/s, 2) as [string, string | undefined];
      if (!spec) throw new Error(`BENCH_AB: "${part}" is not label=checkout[:NAME=value,…]`);
      const [checkout, settings = ''] = spec.split(/:(.*)/s, 2) as [string, string | undefined];
      const env = Object.fromEntries(
        settings
          .split(',')
          .filter(Boolean)
          .map((setting) => setting.split(/=(.*)/s, 2) as [string, string]),
      );
      return { label, checkout: resolve(checkout), env };
    });
}

/** Minor page faults and user/system CPU ticks of a process, from /proc (Linux). */
function processCounters(pid: number): { faults: number; userTicks: number; systemTicks: number } | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { faults: Number(fields[7]), userTicks: Number(fields[11]), systemTicks: Number(fields[12]) };
  } catch {
    return null;
  }
}

const variants = parseVariants(process.env.BENCH_AB ?? 'ours=.');
const machine = describeMachine();
if (machine.pinning) pinProcess(process.pid, machine.pinning.load);
const redis =
  process.env.BENCH_AB_REDIS === '1'
    ? await openBenchRedis(options.redisUrl, machine.pinning?.load ?? null)
    : null;
const budget = { RATE_LIMIT_AUTHENTICATED: `${NEVER_REFUSES.limit}/${NEVER_REFUSES.windowMs}ms` };

const running: { variant: Variant; target: Target; results: number[] }[] = [];
try {
  for (const variant of variants) {
    // Each checkout's own driver module starts that checkout's target file.
    const module = pathToFileURL(`${variant.checkout}/bench/lib/target-process.ts`).href;
    const { TargetProcess } = (await import(module)) as typeof import('./lib/target-process.ts');
    const env = {
      ...oursEnv({ users: options.users, redisUrl: redis?.url ?? null, env: budget }),
      ...variant.env,
    };
    console.log(`[ab] starting ${variant.label} (${variant.checkout})`);
    const target = await TargetProcess.start(
      { name: variant.label, file: 'ours', env },
      machine.pinning?.server ?? null,
    );
    running.push({ variant, target, results: [] });
  }
  for (let round = 1; round <= options.rounds; round++) {
    for (const run of running) {
      const requests = meRequests(options.users, run.target.extra as BenchSession[]);
      const before = processCounters(run.target.pid);
      const measured = await measure(run.target, requests, {
        duration: options.duration,
        warmup: options.warmup,
        connections: options.connections,
      });
      const after = processCounters(run.target.pid);
      run.results.push(measured.cpuMicrosPerRequest);
      const counters =
        before && after
          ? `  faults/req ${((after.faults - before.faults) / measured.requests).toFixed(3)}` +
            `  sys share ${((100 * (after.systemTicks - before.systemTicks)) / Math.max(1, after.userTicks - before.userTicks + after.systemTicks - before.systemTicks)).toFixed(0)} %`
          : '';
      console.log(
        `[ab] round ${round}/${options.rounds} ${run.variant.label.padEnd(16)} ${measured.cpuMicrosPerRequest.toFixed(2)} µs/req  non-2xx ${measured.non2xx}  errors ${measured.errors}${counters}`,
      );
    }
  }
  for (const { variant, results } of running) {
    const sorted = [...results].sort((a, b) => a - b);
    const middle = sorted.length / 2;
    const median =
      sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    console.log(
      `[ab] median ${variant.label.padEnd(16)} ${median.toFixed(2)} µs/req  (min ${sorted[0]!.toFixed(2)}, max ${sorted.at(-1)!.toFixed(2)}, ${sorted.length} rounds)`,
    );
  }
} finally {
  for (const { target } of running) await target.stop();
  await redis?.stop();
  for (const dir of benchDataDirs()) rmSync(dir, { recursive: true, force: true });
}
