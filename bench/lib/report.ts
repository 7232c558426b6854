// Markdown tables of a run: comparison, ours vs each peer, refusals, Redis work, bulk, memory, targets.
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

function table(header: string[], rows: string[][]): string {
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
    ['Target', 'round trips / decision', 'commands executed / decision', 'commands sent / decision'],
    rows.map((r) => [
      r.label,
      fixed(r.roundTrips, 2),
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
    ['Target (issue 5)', 'Measured', 'Met'],
    checks.map((c) => [c.target, c.measured, c.met === null ? 'not measured' : c.met ? 'yes' : 'no']),
  );
}
