// The targets the guard's phases measure one process at a time, and a baseline checkout's ours for an A/B.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BenchTarget, comparisonTargets, NEVER_REFUSES, oursEnv } from './catalogue.ts';
import { options } from './options.ts';
import { TargetProcess } from './target-process.ts';

/** The guard's rows (bench/lib/results.ts), in its order. */
const ROWS = ['fastify-contract', 'fastify-stack-memory', 'fastify-stack-redis', 'ours-memory', 'ours-redis'];

/**
 * BENCH_BASELINE=<checkout>[,<checkout>…] (BENCH_INSTR_BASELINE, its former name, still works):
 * those checkouts' ours · memory and ours · redis join the instructions and breakdown phases,
 * each started by its own checkout's driver, named `ours-<store>-<directory name>`.
 */
const BASELINES = (process.env.BENCH_BASELINE ?? process.env.BENCH_INSTR_BASELINE ?? '')
  .split(',')
  .filter(Boolean)
  .map((dir) => resolve(dir));

export interface GuardTarget {
  readonly target: BenchTarget;
  readonly start: typeof TargetProcess.start;
}

/** The guard's rows and the baselines' ours, filtered by BENCH_TARGETS; ours with `oursEnv` on top. */
export async function guardTargets(
  redisUrl: string | null,
  oursExtraEnv: Record<string, string> = {},
): Promise<GuardTarget[]> {
  const all = comparisonTargets(NEVER_REFUSES, options.users, redisUrl).map((t) =>
    t.family === 'ours' ? { ...t, env: { ...t.env, ...oursExtraEnv } } : t,
  );
  const targets: GuardTarget[] = ROWS.flatMap((name) =>
    all.filter((t) => t.name === name).map((target) => ({ target, start: TargetProcess.start })),
  );
  for (const checkout of BASELINES) {
    // That checkout's own driver module starts that checkout's bench/targets/ours.ts.
    const module = pathToFileURL(`${checkout}/bench/lib/target-process.ts`).href;
    const other = ((await import(module)) as typeof import('./target-process.ts')).TargetProcess;
    const tag = checkout.split('/').filter(Boolean).at(-1)!;
    for (const t of all.filter((t) => t.family === 'ours')) {
      // Its own database and Redis keys: the two checkouts' schemas may differ.
      const { DATA_DIR, REDIS_KEY_PREFIX } = oursEnv({ users: options.users });
      const env = { ...t.env, DATA_DIR: DATA_DIR!, REDIS_KEY_PREFIX: REDIS_KEY_PREFIX! };
      const target = { ...t, env, name: `${t.name}-${tag}`, label: `${t.label}, checkout ${tag}` };
      targets.push({ target, start: other.start.bind(other) });
    }
  }
  return targets.filter(
    ({ target }) => options.targets.length === 0 || options.targets.some((f) => target.name.includes(f)),
  );
}
