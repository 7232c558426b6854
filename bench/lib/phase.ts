// What a phase of npm run bench is: a module that measures, gives its data and Markdown (bench/run.ts).
import type { BenchRedis } from './redis.ts';

/** What every phase is given. */
export interface RunContext {
  /** The private redis-server of this run (or BENCH_REDIS_URL's), null when none answers. */
  readonly redis: BenchRedis | null;
  /** The core the servers are pinned to, null when not pinned. */
  readonly serverCore: number | null;
  readonly log: (message: string) => void;
  /** Lines printed under the run's tables (a target that did not start, a Redis missing…). */
  readonly notes: string[];
}

/** What a phase gives: its data for the results file, its Markdown, and what of it BENCHMARKS.md shows. */
export interface PhaseOutcome {
  readonly data: unknown;
  /** Every table of the phase: the console and the run's own file (bench/runs/). */
  readonly markdown: string;
  /** BENCHMARKS.md's part, when shorter than `markdown`; null leaves the phase out of it. */
  readonly brief?: string | null;
}

/** One part of `npm run bench`: it measures, then gives its data and its Markdown. */
export interface Phase {
  readonly name: string;
  run(context: RunContext): Promise<PhaseOutcome | null>;
}
