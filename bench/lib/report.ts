// Markdown tables of a run: comparison, ours vs each peer, refusals, Redis work, bulk, memory, targets.
import type { CapacityRow } from '../capacity.ts';
import type { FootprintRow } from '../footprint.ts';
import type { MemoryResult } from '../memory-per-key.ts';
import type { TripCount } from './redis.ts';
import type { Row } from './summary.ts';

export interface TripRow extends TripCount {
  readonly name: string;
  readonly label: string;
}

const fixed = (value: number, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';
const ratio = (value: number) => (Number.isFinite(value) && value > 0 ? `${value.toFixed(2)}×` : '–');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)}`;

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The raw node:http row, against which every other row is a ratio. */
export type Baseline = Pick<Row, 'rps' | 'cpuMicrosPerRequest'> | undefined;

/**
 * The generic-bucket comparison: one row per target, ratios to raw node:http twice, by measured
 * req/s and by server CPU per request (what req/s would be were every server saturating its core).
 */
export function comparisonTable(rows: readonly Row[], raw: Baseline): string {
  return table(
    [
      'Target',
      'req/s',
      '× raw (req/s)',
      '× raw (CPU)',
      'p50 ms',
      'p99 ms',
      'errors / non-2xx',
      'RSS MB',
      'CPU µs/req',
      'server core busy',
    ],
    rows.map((r) => [
      r.label,
      fixed(r.rps),
      ratio(r.rps / (raw?.rps ?? Number.NaN)),
      ratio((raw?.cpuMicrosPerRequest ?? Number.NaN) / r.cpuMicrosPerRequest),
      fixed(r.p50, 1),
      fixed(r.p99, 1),
      `${r.errors} / ${r.non2xx}`,
      mb(r.rss),
      fixed(r.cpuMicrosPerRequest, 1),
      `${fixed(r.serverCpuShare * 100)} %`,
    ]),
  );
}

/** Ours against every peer with the same kind of store: >1 means ours is faster / cheaper. */
export function oursVsPeersTable(rows: readonly Row[]): string {
  const lines: string[][] = [];
  for (const ours of rows.filter((r) => r.family === 'ours')) {
    for (const peer of rows.filter(
      (r) => r.family !== 'ours' && (r.store === ours.store || r.store === 'none'),
    )) {
      lines.push([
        ours.label,
        peer.label,
        ratio(ours.rps / peer.rps),
        ratio(peer.cpuMicrosPerRequest / ours.cpuMicrosPerRequest),
      ]);
    }
  }
  return table(['Ours', 'Peer', 'req/s ours ÷ peer', 'CPU/req peer ÷ ours'], lines);
}

/** The refusal path: budgets spent, so nearly every answer is a 429. */
export function refusalTable(rows: readonly Row[], raw: Baseline): string {
  return table(
    [
      'Target',
      'req/s',
      '× raw (req/s)',
      '× raw (CPU)',
      'p50 ms',
      'p99 ms',
      '429 share',
      'errors / other non-2xx',
      'RSS MB',
      'CPU µs/req',
    ],
    rows.map((r) => {
      const refused = r.statusCodes['429'] ?? 0;
      return [
        r.label,
        fixed(r.rps),
        ratio(r.rps / (raw?.rps ?? Number.NaN)),
        ratio((raw?.cpuMicrosPerRequest ?? Number.NaN) / r.cpuMicrosPerRequest),
        fixed(r.p50, 1),
        fixed(r.p99, 1),
        `${fixed((refused / Math.max(1, r.requests)) * 100, 1)} %`,
        `${r.errors} / ${r.non2xx - refused}`,
        mb(r.rss),
        fixed(r.cpuMicrosPerRequest, 1),
      ];
    }),
  );
}

export function tripsTable(rows: readonly TripRow[]): string {
  return table(
    [
      'Target',
      'round trips / decision (Redis socket reads)',
      'commands sent / decision',
      'commands executed / decision',
      'by command',
    ],
    rows.map((r) => [
      r.label,
      fixed(r.roundTrips, 2),
      fixed(r.sent, 2),
      fixed(r.commands, 2),
      Object.entries(r.byCommand)
        .map(([name, n]) => `${name} ${n.toFixed(2)}`)
        .join(', '),
    ]),
  );
}

export function bulkTable(rows: readonly Row[]): string {
  return table(
    ['Database', 'PATCHes', 'req/s', 'p50 ms', 'p99 ms', 'errors / non-2xx', 'CPU µs/req'],
    rows.map((r) => [
      r.label,
      String(r.requests),
      fixed(r.rps),
      fixed(r.p50, 1),
      fixed(r.p99, 1),
      `${r.errors} / ${r.non2xx}`,
      fixed(r.cpuMicrosPerRequest),
    ]),
  );
}

export function memoryTable(results: readonly MemoryResult[]): string {
  return table(
    ['Store', 'Budget', 'keys', 'bytes per key', 'note'],
    results.map((r) => [r.store, r.budget, fixed(r.keys), fixed(r.bytesPerKey), r.note ?? '']),
  );
}

export function footprintTable(rows: readonly FootprintRow[]): string {
  return table(
    ['Database', 'ready (ms)', 'RSS after use (MiB)', 'peak RSS (MiB)'],
    rows.map((r) => [r.mode, fixed(r.readyMs), fixed(r.rssAfterUseMiB), fixed(r.peakRssMiB)]),
  );
}

export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | null;
}

export function targetsTable(checks: readonly TargetCheck[]): string {
  return table(
    ['Target', 'Measured', 'Met'],
    checks.map((c) => [c.target, c.measured, c.met === null ? 'not measured' : c.met ? 'yes' : 'no']),
  );
}

/** What each control costs Redis, as measured (bench/capacity.ts). */
export function capacityTable(rows: readonly CapacityRow[]): string {
  return table(
    [
      'Control',
      'Budget',
      'shape',
      'decisions',
      'EVALSHA µs per call (commandstats)',
      'Redis CPU µs per decision (INFO cpu)',
      'bytes per key (MEMORY USAGE)',
    ],
    rows.map((r) => [
      r.control,
      r.budget,
      r.shape,
      fixed(r.decisions),
      fixed(r.scriptMicros, 1),
      fixed(r.serverCpuMicros, 1),
      fixed(r.bytesPerKey),
    ]),
  );
}

/** The assumptions of the sizing table, stated beside it. */
export const SIZING = {
  requestsPerSecond: 50_000,
  /** Every active user made a request within the window, so holds one generic-bucket key. */
  keysPerUser: 1,
  /** Share of one core a Redis shard (single-threaded for commands) may use. */
  redisCpuTarget: 0.5,
  /** Memory a shard may fill, of its maxmemory. */
  shardMemoryBytes: 8 * 1024 ** 3,
  shardMemoryTarget: 0.7,
  /** Share of its one core a Node instance may use. */
  nodeCpuTarget: 0.7,
} as const;

const USERS = [100_000, 1_000_000, 10_000_000];

/**
 * From measured per-decision Redis CPU and per-key memory of the generic bucket, and our CPU per
 * request on Redis: what 50 k requests/s costs for 100 k, 1 M and 10 M active users.
 */
export function sizingTable(capacity: readonly CapacityRow[], oursRedisMicros: number | null): string {
  const generic = capacity.find((r) => r.control === 'api-authenticated');
  if (!generic) return 'Not measured (needs the capacity phase).';
  const s = SIZING;
  const redisCores = (s.requestsPerSecond * generic.serverCpuMicros) / 1e6;
  const cpuShards = Math.ceil(redisCores / s.redisCpuTarget);
  const nodes =
    oursRedisMicros === null
      ? null
      : Math.ceil((s.requestsPerSecond * oursRedisMicros) / 1e6 / s.nodeCpuTarget);
  return table(
    [
      'Active users',
      'Redis memory',
      'Redis CPU (cores)',
      'Redis Cluster shards',
      'Node instances (1 core each)',
    ],
    USERS.map((users) => {
      const bytes = users * s.keysPerUser * generic.bytesPerKey;
      const memoryShards = Math.ceil(bytes / (s.shardMemoryBytes * s.shardMemoryTarget));
      const shards = Math.max(1, cpuShards, memoryShards);
      return [
        fixed(users),
        bytes >= 1024 ** 3
          ? `${(bytes / 1024 ** 3).toFixed(2)} GiB`
          : `${(bytes / 1024 ** 2).toFixed(0)} MiB`,
        fixed(redisCores, 2),
        `${shards} (${cpuShards} for CPU, ${memoryShards} for memory)`,
        nodes === null ? 'not measured' : String(nodes),
      ];
    }),
  );
}

/** The sizing table's assumptions, in words. */
export function sizingAssumptions(capacity: readonly CapacityRow[], oursRedisMicros: number | null): string {
  const generic = capacity.find((r) => r.control === 'api-authenticated');
  const s = SIZING;
  return [
    `- ${fixed(s.requestsPerSecond)} requests/s, each one decision of the generic bucket (\`api-authenticated\`, ${generic?.budget ?? '–'}): ${fixed(generic?.serverCpuMicros ?? Number.NaN, 1)} µs of Redis CPU per decision and ${fixed(generic?.bytesPerKey ?? Number.NaN)} B per key, as measured above. Logins, bulk reassignments and unauthenticated calls are a small share and are left out.`,
    `- ${s.keysPerUser} key per active user: "active" means a request within the last window (15 min), and a key expires one bucket after the window once its user stops.`,
    `- A Redis shard runs commands on one thread: at most ${s.redisCpuTarget * 100} % of a core (headroom for replication, persistence and bursts), and at most ${s.shardMemoryTarget * 100} % of ${s.shardMemoryBytes / 1024 ** 3} GiB of memory. Replicas double the memory, not the shard count.`,
    `- A Node instance is one process on one core at most ${s.nodeCpuTarget * 100} % busy, at ${oursRedisMicros === null ? '–' : fixed(oursRedisMicros, 1)} µs of CPU per request (ours · redis above, request logs on).`,
  ].join('\n');
}
