// Renders a run as Markdown and puts it into BENCHMARKS.md between its markers (the rest is kept).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { floodSummary } from '../flood.ts';
import {
  bulkTable,
  capacityTable,
  comparisonTable,
  footprintTable,
  memoryTable,
  oursVsPeersTable,
  refusalTable,
  sizingAssumptions,
  sizingTable,
  targetsTable,
  tripsTable,
} from './report.ts';
import { checkTargets, type Results } from './results.ts';

const FILE = fileURLToPath(new URL('../../BENCHMARKS.md', import.meta.url));

export function renderResults(results: Results): string {
  const { machine, settings } = results;
  const raw = results.throughput?.find((r) => r.name === 'raw');
  const parts = [
    `Run of ${results.date}: \`${results.command}\``,
    '',
    `Machine: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}, ${machine.platform}. ` +
      (machine.pinning
        ? `Each server pinned to core ${machine.pinning.server}; load generator${results.redis?.private ? ' and the private redis-server' : ''} on core ${machine.pinning.load} (taskset).`
        : 'Not pinned (taskset missing or one core).'),
    `Load: ${settings.connections} connections, ${settings.users} distinct users, ${settings.warmup} s warm-up + ${settings.duration} s measured per round, ` +
      `${settings.rounds} interleaved rounds (A B C … A B C …), each on fresh processes started in a rotated order, medians over rounds; errors and non-2xx summed. ` +
      `Every request is \`GET /api/auth/me\` with the same headers: peers key the per-user bucket by \`x-user-id\`, ours by the session cookie (a real login). ` +
      `Our sessions: ${results.sessionCache}.`,
  ];
  const starved = (results.throughput ?? []).filter((r) => r.serverCpuShare < 0.9).map((r) => r.label);
  if (starved.length > 0) {
    parts.push(
      '',
      `**Read req/s with care**: ${starved.length === results.throughput?.length ? 'every server' : starved.join(', ')} used less than 90 % of its core, so the ` +
        'load generator or other work on the machine, not the server, set their pace. The CPU columns do not ' +
        'depend on that: "× raw (CPU)" is raw node:http\'s CPU per request over the target\'s, the throughput ratio ' +
        'of servers that each saturate a core.',
    );
  }
  if (results.throughput) {
    parts.push(
      '',
      '### Generic per-user bucket, budget never refused',
      '',
      comparisonTable(results.throughput, raw),
    );
    parts.push('', '### Ours against each peer', '', oursVsPeersTable(results.throughput));
  }
  if (results.refusal) {
    parts.push('', "### Refusal path (budget 1/15m: every request after a user's first is refused)", '');
    parts.push(refusalTable(results.refusal, raw), '', '× raw is against the raw node:http run above.');
  }
  if (results.redisTrips) {
    parts.push(
      '',
      `### Redis work per decision (${settings.tripRequests} decisions over ${settings.connections} connections; MONITOR, INFO commandstats and INFO stats)`,
      '',
    );
    parts.push(tripsTable(results.redisTrips));
  }
  if (results.bulk) {
    parts.push('', '### Bulk reassignment: `PATCH /api/employee/tasks/bulk` with 50 ids, one connection', '');
    parts.push(bulkTable(results.bulk));
  }
  if (results.memory) {
    parts.push('', '### Memory per tracked key (heap + external delta after GC, one process per store)', '');
    parts.push(memoryTable(results.memory));
  }
  if (results.footprint) {
    parts.push(
      '',
      '### Footprint of `npm start`: time to `/readyz`, RSS after start + 4 logins + 50 task lists, peak RSS after 8 logins at once (VmRSS / VmHWM)',
      '',
    );
    parts.push(footprintTable(results.footprint));
  }
  if (results.capacity) {
    const oursRedis = results.throughput?.find((r) => r.name === 'ours-redis')?.cpuMicrosPerRequest ?? null;
    parts.push(
      '',
      '### Redis cost of each control at its default budget (`bench/capacity.ts`)',
      '',
      capacityTable(results.capacity),
      '',
      '### Capacity on paper: 50 k requests/s under the default policy',
      '',
      sizingTable(results.capacity, oursRedis),
      '',
      'Assumptions:',
      '',
      sizingAssumptions(results.capacity, oursRedis),
    );
  }
  if (results.flood) {
    const lines = floodSummary(results.flood).split('\n');
    parts.push('', '### The login path under a flood (`bench/flood.ts`)', '', ...lines.map((l) => `- ${l}`));
  }
  parts.push('', '### Issue targets', '', targetsTable(checkTargets(results)));
  if (results.notes.length > 0) parts.push('', ...results.notes.map((n) => `- ${n}`));
  return parts.join('\n');
}

/**
 * Replaces one generated section of BENCHMARKS.md (`results` by npm run bench, `profile` by
 * npm run bench:profile), creating the file or the section when missing; the rest is kept.
 */
export function writeBenchmarksMd(section: string, name: 'results' | 'profile' = 'results'): void {
  const START = `<!-- bench:${name}:start (generated) -->`;
  const END = `<!-- bench:${name}:end -->`;
  const current = existsSync(FILE) ? readFileSync(FILE, 'utf8') : '# Benchmarks\n';
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  const next =
    start === -1 || end === -1
      ? `${current.trimEnd()}\n\n${START}\n${section}\n${END}\n`
      : `${current.slice(0, start + START.length)}\n${section}\n${current.slice(end)}`;
  writeFileSync(FILE, next);
}
