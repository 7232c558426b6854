// npm run bench:ab: ours from two or more checkouts (or settings) under the bench load, rounds interleaved.
//
//   git worktree add ../before HEAD~1 && cp -r dist ../before/ && ln -s "$PWD/node_modules" ../before/
//   BENCH_AB='before=../before;after=.' npm run bench:ab
//   BENCH_AB='logs=.;quiet=.:LOG_LEVEL=warn' npm run bench:ab
//
// Each variant is `label=checkout[:NAME=value,…]`: its server is that checkout's bench/targets/ours.ts
// with those settings on top of the bench's (ours · memory, or ours · redis with BENCH_AB_REDIS=1).
// The variants run side by side, each round measures every variant once, and the whole is done
// BENCH_AB_STARTS times on fresh processes (see below): a server's figure varies from process to
// process by a few µs (BENCHMARKS.md), so a difference well under that needs many starts to show.
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchDataDirs, NEVER_REFUSES, oursEnv } from '../lib/catalogue.ts';
import { measure, median } from '../lib/load.ts';
import { describeMachine, pinProcess } from '../lib/machine.ts';
import { options } from '../lib/options.ts';
import { openBenchRedis } from '../lib/redis.ts';
import { meRequests } from '../lib/requests.ts';
import type { BenchSession } from '../lib/serve.ts';
import type { TargetProcess as Target } from '../lib/target-process.ts';

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
const labels = variants.map((variant) => variant.label);
if (new Set(labels).size !== labels.length)
  throw new Error(`BENCH_AB: labels must differ (${labels.join(', ')})`);
const machine = describeMachine();
if (machine.pinning) pinProcess(process.pid, machine.pinning.load);
const redis =
  process.env.BENCH_AB_REDIS === '1'
    ? await openBenchRedis(options.redisUrl, machine.pinning?.load ?? null)
    : null;
const budget = { RATE_LIMIT_AUTHENTICATED: `${NEVER_REFUSES.limit}/${NEVER_REFUSES.windowMs}ms` };

/** µs per request of each variant, every round of both halves. */
const results = new Map<string, number[]>(variants.map((variant) => [variant.label, []]));

/** Starts the variants in this order as fresh processes, measures them round after round, stops them. */
async function half(order: readonly Variant[], name: string): Promise<void> {
  const running: { variant: Variant; target: Target }[] = [];
  try {
    for (const variant of order) {
      // Each checkout's own driver module starts that checkout's target file.
      const module = pathToFileURL(`${variant.checkout}/bench/lib/target-process.ts`).href;
      const { TargetProcess } = (await import(module)) as typeof import('../lib/target-process.ts');
      const env = {
        ...oursEnv({ users: options.users, redisUrl: redis?.url ?? null, env: budget }),
        ...variant.env,
      };
      console.log(`[ab] ${name}: starting ${variant.label} (${variant.checkout})`);
      const target = await TargetProcess.start(
        { name: variant.label, file: 'ours', env },
        machine.pinning?.server ?? null,
      );
      running.push({ variant, target });
    }
    for (let round = 1; round <= options.rounds; round++) {
      // Each round starts with the next variant: a place in the round favours no variant.
      const shift = (round - 1) % running.length;
      for (const { variant, target } of [...running.slice(shift), ...running.slice(0, shift)]) {
        const requests = meRequests(options.users, target.extra as BenchSession[]);
        const before = processCounters(target.pid);
        const measured = await measure(target, requests, {
          duration: options.duration,
          warmup: options.warmup,
          connections: options.connections,
        });
        const after = processCounters(target.pid);
        results.get(variant.label)!.push(measured.cpuMicrosPerRequest);
        const counters =
          before && after
            ? `  faults/req ${((after.faults - before.faults) / measured.requests).toFixed(3)}` +
              `  sys share ${((100 * (after.systemTicks - before.systemTicks)) / Math.max(1, after.userTicks - before.userTicks + after.systemTicks - before.systemTicks)).toFixed(0)} %`
            : '';
        console.log(
          `[ab] ${name} round ${round}/${options.rounds} ${variant.label.padEnd(16)} ${measured.cpuMicrosPerRequest.toFixed(2)} µs/req  non-2xx ${measured.non2xx}  errors ${measured.errors}${counters}`,
        );
      }
    }
  } finally {
    for (const { target } of running) await target.stop();
  }
}

try {
  // Identical servers started one after another measure apart by a few µs per request, each
  // keeping its own figure round after round (BENCHMARKS.md): a variant's figure is a draw per
  // process. So the variants are started BENCH_AB_STARTS times (default 4), each time as fresh
  // processes in an order rotated from the last, and the medians take every start.
  const starts = Math.max(1, Number(process.env.BENCH_AB_STARTS) || 4);
  for (let start = 0; start < starts; start++) {
    const shift = start % variants.length;
    await half([...variants.slice(shift), ...variants.slice(0, shift)], `start ${start + 1}/${starts}`);
  }
  for (const [label, values] of results) {
    const perStart = Array.from({ length: starts }, (_, k) =>
      median(values.slice((k * values.length) / starts, ((k + 1) * values.length) / starts)).toFixed(2),
    );
    console.log(
      `[ab] median ${label.padEnd(16)} ${median(values).toFixed(2)} µs/req over ${values.length} rounds (by start: ${perStart.join(', ')})`,
    );
  }
} finally {
  await redis?.stop();
  for (const dir of benchDataDirs()) rmSync(dir, { recursive: true, force: true });
}
