// The shape of a run's results (the JSON file), and the guard checked against the targets table.
import type { InstructionRow } from '../instructions-phase.ts';
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
 * The guard: ours against the Fastify stack and the contract's floor, by user-space instructions
 * per request (callgrind, the instructions phase) when that phase ran, else by server CPU per
 * request (medians over the rounds), which moves by half between rounds on a shared machine.
 */
const FLOOR = 'fastify-contract';
const GUARD = [
  { ours: 'ours-memory', against: 'fastify-stack-memory', max: 0.25 },
  { ours: 'ours-redis', against: 'fastify-stack-redis', max: 0.3 },
  { ours: 'ours-memory', against: FLOOR, max: 1.5 },
] as const;

/** A row the guard can judge: a target and its cost per request in the measure the guard uses. */
export interface GuardRow {
  readonly name: string;
  readonly label: string;
  readonly cost: number;
}

/** Judges the guard on the instructions phase's rows when given, else on the targets phase's CPU time. */
export function checkGuard(
  instructions: readonly InstructionRow[] | undefined,
  targets: readonly Row[] | undefined,
): GuardCheck[] {
  const byInstructions = instructions !== undefined && instructions.length > 0;
  const measure = byInstructions ? 'instructions per request (callgrind)' : 'CPU time per request';
  const rows: GuardRow[] = byInstructions
    ? instructions.map((r) => ({ name: r.name, label: r.label, cost: r.perRequest }))
    : (targets ?? []).map((r) => ({ name: r.name, label: r.label, cost: r.cpuMicrosPerRequest }));
  const shown = (r: GuardRow) =>
    byInstructions ? `${(r.cost / 1000).toFixed(1)} k` : `${r.cost.toFixed(1)} µs`;
  const find = (name: string) => rows.find((r) => r.name === name);
  const floor = find(FLOOR);
  return GUARD.map(({ ours, against, max }) => {
    const [mine, theirs] = [find(ours), find(against)];
    const target = `${mine?.label ?? ours} ≤ ${max}× ${theirs?.label ?? against}, by ${measure}`;
    if (!mine || !theirs) return { target, measured: 'not run', met: null };
    const ratio = mine.cost / theirs.cost;
    // Against a stack, the floor's own ratio is the least a server on Fastify's hooks that sends
    // the contract's headers and its request line through Fastify's logger can show: a row whose
    // maximum is below it cannot be met by such a server.
    const floorRatio = floor && against !== FLOOR ? floor.cost / theirs.cost : null;
    const reach =
      floorRatio === null
        ? ''
        : `; the floor itself ${floorRatio.toFixed(2)}×${floorRatio > max ? ": out of reach for a server on Fastify's hooks and logger" : ''}`;
    return {
      target,
      measured: `${ratio.toFixed(2)}× (${shown(mine)} vs ${shown(theirs)})${reach}`,
      met: ratio <= max,
    };
  });
}
