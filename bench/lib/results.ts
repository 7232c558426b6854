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
  const raw = find('raw');
  const oursMemory = find('ours-memory');
  const oursRedis = find('ours-redis');
  const bestPeerRedis = rows
    .filter((r) => r.family === 'peer' && r.store === 'redis')
    .sort((a, b) => a.cpuMicrosPerRequest - b.cpuMicrosPerRequest)[0];
  const oursTrips = results.redisTrips?.find((t) => t.name === 'ours-redis');
  const oursMemoryPerKey = (results.memory ?? []).filter(
    (m) => m.store === 'ours-1000' || m.store === 'ours-100',
  );

  const checks: TargetCheck[] = [];
  // Judged by CPU per request: on a loaded machine req/s follows the load generator (see the table).
  const memoryRatio = raw && oursMemory ? raw.cpuMicrosPerRequest / oursMemory.cpuMicrosPerRequest : null;
  checks.push({
    target: 'ours · memory ≥ 0.8× raw node:http',
    measured:
      memoryRatio === null || !raw || !oursMemory
        ? 'not run'
        : `${memoryRatio.toFixed(2)}× by CPU/req (${oursMemory.cpuMicrosPerRequest.toFixed(1)} µs vs ${raw.cpuMicrosPerRequest.toFixed(1)} µs); ${(oursMemory.rps / raw.rps).toFixed(2)}× by req/s`,
    met: memoryRatio === null ? null : memoryRatio >= 0.8,
  });
  const redisRatio =
    oursRedis && bestPeerRedis ? bestPeerRedis.cpuMicrosPerRequest / oursRedis.cpuMicrosPerRequest : null;
  checks.push({
    target: 'ours · redis ≥ 1.0× the best peer Redis store',
    measured:
      redisRatio === null || !bestPeerRedis || !oursRedis
        ? 'not run (needs our Redis store, a Redis and a peer Redis target)'
        : `${redisRatio.toFixed(2)}× ${bestPeerRedis.label} by CPU/req (${oursRedis.cpuMicrosPerRequest.toFixed(1)} µs vs ${bestPeerRedis.cpuMicrosPerRequest.toFixed(1)} µs); ${(oursRedis.rps / bestPeerRedis.rps).toFixed(2)}× by req/s`,
    met: redisRatio === null ? null : redisRatio >= 1,
  });
  checks.push({
    target: 'ours · redis: exactly one Redis round trip per decision',
    measured: oursTrips ? `${oursTrips.roundTrips.toFixed(2)} round trips per decision` : 'not run',
    met: oursTrips ? Math.abs(oursTrips.roundTrips - 1) < 0.01 : null,
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
