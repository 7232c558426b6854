// Folds a target's rounds into one row: medians of rates, latencies and CPU; sums of failures.
import type { BenchTarget } from './catalogue.ts';
import { type Measurement, median } from './load.ts';

export interface Row {
  readonly name: string;
  readonly label: string;
  readonly family: BenchTarget['family'];
  readonly store: BenchTarget['store'];
  readonly rounds: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuMicrosPerRequest: number;
  readonly serverCpuShare: number;
  readonly requests: number;
  readonly errors: number;
  readonly non2xx: number;
  readonly statusCodes: Record<string, number>;
  /** RSS after the last round, bytes. */
  readonly rss: number;
  /** Every round as measured, for the results file. */
  readonly samples: readonly Measurement[];
}

export function summarise(target: BenchTarget, samples: readonly Measurement[]): Row {
  const statusCodes: Record<string, number> = {};
  for (const sample of samples)
    for (const [code, count] of Object.entries(sample.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const sum = (pick: (m: Measurement) => number) => samples.reduce((total, m) => total + pick(m), 0);
  return {
    name: target.name,
    label: target.label,
    family: target.family,
    store: target.store,
    rounds: samples.length,
    rps: median(samples.map((m) => m.rps)),
    p50: median(samples.map((m) => m.p50)),
    p99: median(samples.map((m) => m.p99)),
    cpuMicrosPerRequest: median(samples.map((m) => m.cpuMicrosPerRequest)),
    serverCpuShare: median(samples.map((m) => m.serverCpuShare)),
    requests: sum((m) => m.requests),
    errors: sum((m) => m.errors),
    non2xx: sum((m) => m.non2xx),
    statusCodes,
    rss: samples.at(-1)?.rss ?? 0,
    samples,
  };
}
