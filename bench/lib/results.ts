// The shape of a run's results (the JSON file), and the guard checked against the targets table.
import type { Machine } from './machine.ts';
import type { Options } from './options.ts';
import type { GuardCheck } from './report.ts';
import type { Row } from './summary.ts';

export interface Results {
  readonly date: string;
  readonly command: string;
  readonly machine: Machine;
  readonly settings: Options;
  /** How our instances cache session lookups during the run. */
  readonly sessionCache: string;
  /** Each phase's own data, by phase name (bench/run.ts). */
  readonly phases: Record<string, unknown>;
  readonly notes: string[];
}

/**
 * The guard, judged by server CPU per request (medians over the rounds): on a loaded machine
 * req/s follows the load generator, CPU time does not.
 */
const GUARD = [
  { ours: 'ours-memory', against: 'fastify-stack-memory', max: 0.25 },
  { ours: 'ours-redis', against: 'fastify-stack-redis', max: 0.3 },
  { ours: 'ours-memory', against: 'fastify-contract', max: 1.5 },
] as const;

export function checkGuard(rows: readonly Row[]): GuardCheck[] {
  const find = (name: string) => rows.find((r) => r.name === name);
  const cpu = (r: Row) => `${r.cpuMicrosPerRequest.toFixed(1)} µs`;
  return GUARD.map(({ ours, against, max }) => {
    const [mine, theirs] = [find(ours), find(against)];
    const target = `${mine?.label ?? ours} ≤ ${max}× ${theirs?.label ?? against} (CPU per request)`;
    if (!mine || !theirs) return { target, measured: 'not run', met: null };
    const ratio = mine.cpuMicrosPerRequest / theirs.cpuMicrosPerRequest;
    return {
      target,
      measured: `${ratio.toFixed(2)}× (${cpu(mine)} vs ${cpu(theirs)})`,
      met: ratio <= max,
    };
  });
}
