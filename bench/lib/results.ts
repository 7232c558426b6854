// The shape of a run's results (the JSON file) and the targets checked against them.
import type { CapacityRow } from '../capacity.ts';
import type { FootprintRow } from '../footprint.ts';
import type { MemoryResult } from '../memory-per-key.ts';
import type { Machine } from './machine.ts';
import type { Options } from './options.ts';
import type { TargetCheck, TripRow } from './report.ts';
import type { Row } from './summary.ts';

export interface Results {
  readonly date: string;
  readonly command: string;
  readonly machine: Machine;
  readonly settings: Options;
  /** How our instances cache session lookups during the run. */
  readonly sessionCache: string;
  redis: { private: boolean } | null;
  throughput: Row[] | null;
  refusal: Row[] | null;
  redisTrips: TripRow[] | null;
  bulk: Row[] | null;
  memory: MemoryResult[] | null;
  /** Time to /readyz and RSS of `npm start`, embedded and on PostgreSQL. */
  footprint: FootprintRow[] | null;
  /** Redis CPU and memory per decision and key, for each control at its default budget. */
  capacity: CapacityRow[] | null;
  readonly notes: string[];
}

/** The targets for our service, as far as this run measured them. */
export function checkTargets(results: Results): TargetCheck[] {
  const rows = results.throughput ?? [];
  const find = (name: string) => rows.find((r) => r.name === name);
  const oursMemory = find('ours-memory');
  const oursRedis = find('ours-redis');
  const oursTrips = results.redisTrips?.find((t) => t.name === 'ours-redis');
  const oursMemoryPerKey = (results.memory ?? []).filter(
    (m) => m.store === 'ours-1000' || m.store === 'ours-100',
  );

  const checks: TargetCheck[] = [];
  // Judged by CPU per request: on a loaded machine req/s follows the load generator (see the table).
  const bare = find('fastify-bare');
  const frlRedis = find('fastify-rate-limit-redis');
  const oursQuiet = find('ours-memory-quiet');
  const cpu = (r: Row) => `${r.cpuMicrosPerRequest.toFixed(1)} µs`;
  const rss = (r: Row) => `${(r.rss / 1024 / 1024).toFixed(0)} MB`;
  checks.push({
    target: 'ours · memory ≤ 1.25× Fastify (CPU per request, request logs on)',
    measured:
      oursMemory && bare
        ? `${(oursMemory.cpuMicrosPerRequest / bare.cpuMicrosPerRequest).toFixed(2)}× (${cpu(oursMemory)} vs ${cpu(bare)}; RSS ${rss(oursMemory)} vs ${rss(bare)})` +
          (oursQuiet
            ? `; LOG_LEVEL=warn ${(oursQuiet.cpuMicrosPerRequest / bare.cpuMicrosPerRequest).toFixed(2)}× (${cpu(oursQuiet)})`
            : '')
        : 'not run',
    met: oursMemory && bare ? oursMemory.cpuMicrosPerRequest <= 1.25 * bare.cpuMicrosPerRequest : null,
  });
  checks.push({
    target: 'ours · redis ≤ 1.0× Fastify + @fastify/rate-limit · redis (CPU per request)',
    measured:
      oursRedis && frlRedis
        ? `${(oursRedis.cpuMicrosPerRequest / frlRedis.cpuMicrosPerRequest).toFixed(2)}× (${cpu(oursRedis)} vs ${cpu(frlRedis)}; RSS ${rss(oursRedis)} vs ${rss(frlRedis)})`
        : 'not run (needs a Redis)',
    met: oursRedis && frlRedis ? oursRedis.cpuMicrosPerRequest <= frlRedis.cpuMicrosPerRequest : null,
  });
  checks.push({
    target: 'ours · redis: one EVALSHA per decision, < 1 round trip per decision under load',
    measured: oursTrips
      ? `${(oursTrips.byCommand.evalsha ?? 0).toFixed(2)} EVALSHA and ${oursTrips.roundTrips.toFixed(2)} round trips per decision`
      : 'not run',
    met: oursTrips
      ? Math.abs((oursTrips.byCommand.evalsha ?? 0) - 1) < 0.01 && oursTrips.roundTrips < 1
      : null,
  });
  // The contract's floor: what any implementation on Fastify sends and logs for this answer.
  const allowance = (left: number) =>
    left >= 0 ? `${left.toFixed(1)} µs of the allowance left` : `${(-left).toFixed(1)} µs over the allowance`;
  const floor = find('fastify-contract-logs');
  const floorQuiet = find('fastify-contract');
  checks.push({
    target:
      "the contract's floor (Fastify + the nine headers + one request line; no session, no limiter) ≤ 1.25× Fastify",
    measured:
      floor && bare
        ? `${(floor.cpuMicrosPerRequest / bare.cpuMicrosPerRequest).toFixed(2)}× (${cpu(floor)}` +
          (floorQuiet ? `; without the line ${cpu(floorQuiet)}` : '') +
          `): ${allowance(1.25 * bare.cpuMicrosPerRequest - floor.cpuMicrosPerRequest)}` +
          (oursMemory
            ? `; ours · memory is ${(oursMemory.cpuMicrosPerRequest / floor.cpuMicrosPerRequest).toFixed(2)}× the floor`
            : '')
        : 'not run',
    met: floor && bare ? floor.cpuMicrosPerRequest <= 1.25 * bare.cpuMicrosPerRequest : null,
  });
  const worst = Math.max(...oursMemoryPerKey.map((m) => m.bytesPerKey));
  checks.push({
    target: 'our memory store ≤ 150 B per key at the default generic budgets (1000/15m, 100/15m)',
    measured:
      oursMemoryPerKey.length === 0
        ? 'not run'
        : oursMemoryPerKey.map((m) => `${m.budget}: ${m.bytesPerKey.toFixed(0)} B`).join(', '),
    met: oursMemoryPerKey.length === 0 ? null : worst <= 150,
  });
  checks.push(...footprintChecks(results.footprint ?? []));
  return checks;
}

/** The embedded default's footprint: RSS after use ≤ 250 MiB, peak ≤ 400 MiB, ready in 5 s fresh and 2 s after. */
function footprintChecks(rows: readonly FootprintRow[]): TargetCheck[] {
  const fresh = rows.find((r) => r.mode.includes('empty'));
  const existing = rows.find((r) => r.mode.includes('existing'));
  if (!fresh || !existing) return [];
  const embedded = [fresh, existing];
  const rss = Math.max(...embedded.map((r) => r.rssAfterUseMiB));
  const peak = Math.max(...embedded.map((r) => r.peakRssMiB));
  return [
    {
      target: 'embedded · RSS after start and a few logins ≤ 250 MiB',
      measured: `${rss} MiB`,
      met: rss <= 250,
    },
    {
      target: 'embedded · peak RSS during 8 concurrent logins ≤ 400 MiB',
      measured: `${peak} MiB`,
      met: peak <= 400,
    },
    {
      target: 'embedded · /readyz within 5 s on an empty DATA_DIR, 2 s on an existing one',
      measured: `${(fresh.readyMs / 1000).toFixed(1)} s and ${(existing.readyMs / 1000).toFixed(1)} s`,
      met: fresh.readyMs <= 5000 && existing.readyMs <= 2000,
    },
  ];
}
