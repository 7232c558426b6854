// Drives one target with autocannon: a warm-up, then a measured run with the target's CPU time around it.
import autocannon from 'autocannon';
import type { TargetProcess } from './target-process.ts';

export interface RunSettings {
  readonly duration: number;
  readonly warmup: number;
  readonly connections: number;
}

export interface Measurement {
  readonly requests: number;
  readonly rps: number;
  /** Latency percentiles, milliseconds. */
  readonly p50: number;
  readonly p99: number;
  /** Socket errors and timeouts. */
  readonly errors: number;
  readonly non2xx: number;
  readonly statusCodes: Record<string, number>;
  /** Server CPU (user + system) per completed request, µs. */
  readonly cpuMicrosPerRequest: number;
  /** Share of one core the server used during the measured run. */
  readonly serverCpuShare: number;
  readonly rss: number;
  /** The measured run on the target's monotonic clock (µs), to cut a CPU profile to it. */
  readonly window: readonly [number, number];
}

/**
 * Runs the same request list against the target: every request of the list once (so each user's
 * first request, a session load for ours, is not part of the measurement: autocannon starts every
 * connection at the top of the list, and a short warm-up would reach only its first users), then
 * `warmup` seconds unrecorded, then `duration`.
 */
export async function measure(
  target: TargetProcess,
  requests: autocannon.Request[],
  settings: RunSettings,
): Promise<Measurement> {
  await autocannon({ url: target.url, connections: 1, requests, amount: requests.length });
  const base = { url: target.url, connections: settings.connections, requests, pipelining: 1 };
  if (settings.warmup > 0) await autocannon({ ...base, duration: settings.warmup });
  const before = await target.stats();
  const started = process.hrtime.bigint();
  const result = await autocannon({ ...base, duration: settings.duration });
  const elapsedMicros = Number(process.hrtime.bigint() - started) / 1000;
  const after = await target.stats();
  const completed = Math.max(1, result.requests.total);
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
    statusCodes[code] = stat.count ?? 0;
  return {
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    cpuMicrosPerRequest: (after.cpuMicros - before.cpuMicros) / completed,
    serverCpuShare: (after.cpuMicros - before.cpuMicros) / elapsedMicros,
    rss: after.rss,
    window: [before.monotonicMicros, after.monotonicMicros],
  };
}

/** Sends exactly `amount` requests (no warm-up), for counting what each one costs elsewhere. */
export async function sendExactly(
  target: TargetProcess,
  requests: autocannon.Request[],
  amount: number,
  connections: number,
): Promise<autocannon.Result> {
  return autocannon({ url: target.url, connections, requests, amount });
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
