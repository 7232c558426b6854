// The shape of a run's results (the JSON file), and the guard checked against the targets table.
import type { Machine } from './machine.ts';
import type { Options } from './options.ts';
import type { GuardCheck } from './report.ts';
import type { Row } from './summary.ts';

/** A row of the instructions phase (phases/instructions.ts), one target's count. */
export interface InstructionRow {
  readonly name: string;
  readonly label: string;
  /** Instructions per request over all samples (the median process when several), compilers and the nextTick slow path left out. */
  readonly perRequest: number;
  /** Each process's median sample (ours · redis runs several). */
  readonly byProcess?: readonly number[];
  /** Every sample's figure, as above. */
  readonly samples: readonly number[];
  /** Full collections' share of perRequest (marking, sweeping, compacting), over all samples. */
  readonly fullGcPerRequest?: number;
  /** Median sample's nextTick slow path per request (left out of perRequest). */
  readonly tickSlowPath: number;
  readonly failures: number;
}

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
 * The guard: ours against the contract's floor, measured in the same run, by both measures: server
 * CPU time per request (the targets phase, median over rounds; it moves with the machine's load)
 * and user-space instructions per request (the instructions phase, callgrind; every process of
 * ours on Redis, so a process that drew a costlier start fails the row). The Fastify stacks are
 * context rows: ours' ratio to them, judged against nothing.
 */
const FLOOR = 'fastify-contract';
type Measure = 'cpu' | 'instructions';
const GUARD: readonly { ours: string; max: number; measure: Measure }[] = [
  { ours: 'ours-memory', max: 1.25, measure: 'cpu' },
  { ours: 'ours-memory', max: 1.15, measure: 'instructions' },
  { ours: 'ours-redis', max: 1.6, measure: 'instructions' },
  { ours: 'ours-redis', max: 1.6, measure: 'cpu' },
];
/** Context: ours against the stack on the same store. */
const CONTEXT = [
  { ours: 'ours-memory', against: 'fastify-stack-memory' },
  { ours: 'ours-redis', against: 'fastify-stack-redis' },
] as const;

/** A row the guard can judge: a target's cost per request in one measure, each process's when several. */
export interface GuardRow {
  readonly name: string;
  readonly label: string;
  readonly cost: number;
  readonly byProcess: readonly number[];
}

const MEASURES: Record<Measure, { name: string; shown: (cost: number) => string }> = {
  cpu: { name: 'CPU time per request (median over rounds)', shown: (c) => `${c.toFixed(1)} µs` },
  instructions: {
    name: 'instructions per request (callgrind), every process',
    shown: (c) => `${(c / 1000).toFixed(1)} k`,
  },
};

/** Judges the guard on the rows of the phases that ran; a row whose phase did not run reads "not run". */
export function checkGuard(
  instructions: readonly InstructionRow[] | undefined,
  targets: readonly Row[] | undefined,
): GuardCheck[] {
  const rows: Record<Measure, GuardRow[]> = {
    cpu: (targets ?? []).map((r) => ({
      name: r.name,
      label: r.label,
      cost: r.cpuMicrosPerRequest,
      byProcess: [r.cpuMicrosPerRequest],
    })),
    instructions: (instructions ?? []).map((r) => ({
      name: r.name,
      label: r.label,
      cost: r.perRequest,
      byProcess: r.byProcess ?? [r.perRequest],
    })),
  };
  const find = (measure: Measure, name: string) => rows[measure].find((r) => r.name === name);
  const checks: GuardCheck[] = GUARD.map(({ ours, max, measure }) => {
    const [mine, floor] = [find(measure, ours), find(measure, FLOOR)];
    const { name, shown } = MEASURES[measure];
    const target = `${mine?.label ?? ours} ≤ ${max}× the floor, by ${name}`;
    if (!mine || !floor) return { target, measured: 'not run', met: null };
    // CPU time: the median over rounds; instructions: ours' costliest process against the
    // floor's cheapest, so that no draw at a start (instructions-phase.ts) passes the guard.
    const worst = measure === 'cpu' ? mine.cost : Math.max(...mine.byProcess);
    const base = measure === 'cpu' ? floor.cost : Math.min(...floor.byProcess);
    const ratio = worst / base;
    const processes =
      mine.byProcess.length > 1
        ? `; by process ${mine.byProcess.map((c) => `${(c / base).toFixed(2)}×`).join(', ')}`
        : '';
    return {
      target,
      measured: `${ratio.toFixed(2)}× (${shown(worst)} vs ${shown(base)})${processes}`,
      met: ratio <= max,
    };
  });
  for (const { ours, against } of CONTEXT)
    for (const measure of ['cpu', 'instructions'] as const) {
      const [mine, theirs, floor] = [find(measure, ours), find(measure, against), find(measure, FLOOR)];
      if (!mine || !theirs) continue;
      const { name, shown } = MEASURES[measure];
      const floorRatio = floor ? `; the floor itself ${(floor.cost / theirs.cost).toFixed(2)}×` : '';
      checks.push({
        target: `${mine.label} against the Fastify stack · ${against.split('-').at(-1)}, by ${name.replace(', every process', '')}`,
        measured: `${(mine.cost / theirs.cost).toFixed(2)}× (${shown(mine.cost)} vs ${shown(theirs.cost)})${floorRatio}`,
        met: 'context',
      });
    }
  return checks;
}
