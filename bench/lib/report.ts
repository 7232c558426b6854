// Markdown tables of a run: the targets table, the guard, Redis work per decision.
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
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)}`;

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * One row per target: server CPU per request first (what the guard judges), its spread over the
 * rounds, and each target's CPU as a multiple of ours on the same store (the floor against ours ·
 * memory).
 */
export function targetsTable(rows: readonly Row[]): string {
  const ours = (store: Row['store']) =>
    rows.find((r) => r.family === 'ours' && r.store === (store === 'none' ? 'memory' : store));
  return table(
    [
      'Target',
      'CPU µs/req (median)',
      'rounds min–max',
      '× ours (same store)',
      'req/s',
      'p50 ms',
      'p99 ms',
      'errors / non-2xx',
      'RSS MB',
    ],
    rows.map((r) => {
      const cpu = r.samples.map((m) => m.cpuMicrosPerRequest);
      const mine = ours(r.store);
      return [
        r.label,
        fixed(r.cpuMicrosPerRequest, 1),
        `${fixed(Math.min(...cpu), 1)}–${fixed(Math.max(...cpu), 1)}`,
        mine ? `${(r.cpuMicrosPerRequest / mine.cpuMicrosPerRequest).toFixed(2)}×` : '–',
        fixed(r.rps),
        fixed(r.p50, 1),
        fixed(r.p99, 1),
        `${r.errors} / ${r.non2xx}`,
        mb(r.rss),
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

export interface GuardCheck {
  readonly target: string;
  readonly measured: string;
  /** null: its phase did not run; 'context': shown beside the guard, not a target. */
  readonly met: boolean | null | 'context';
}

/** Checks and whether each was met; `heading` names the first column (the guard's, a phase's targets). */
export function guardTable(checks: readonly GuardCheck[], heading = 'Guard'): string {
  return table(
    [heading, 'Measured', 'Met'],
    checks.map((c) => [
      c.target,
      c.measured,
      c.met === 'context' ? 'context' : c.met === null ? 'not measured' : c.met ? 'yes' : '**no**',
    ]),
  );
}
