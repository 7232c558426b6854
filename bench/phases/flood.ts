// The flood phase of npm run bench: the flood bench (bench/flood/), its figures and targets as Markdown.
import { floodSettings, runFloodBench } from '../flood/index.ts';
import { heapSummary, type ScenarioResults } from '../flood/kit.ts';
import { type FloodResults, floodVerdicts } from '../flood/outside.ts';
import { onAllCores } from '../lib/machine.ts';
import type { Phase } from '../lib/phase.ts';
import { guardTable, table } from '../lib/report.ts';

/**
 * Runs as `npm run bench:flood` does (FLOOD_* knobs), on every core: the server is `npm start` on
 * the whole machine and the checks/s it is judged against are the whole machine's, so neither may
 * inherit the driver's pinning to the load core.
 */
export const floodPhase: Phase = {
  name: 'flood',
  async run(context) {
    const settings = floodSettings();
    context.log(
      `flood: ${settings.concurrency} login attempts in flight for ${settings.durationMs / 1000} s against npm start`,
    );
    // FLOOD_SCENARIOS chooses here as in bench:flood: `outside` for the outside flood.
    const { outside: results, scenarios } = await onAllCores(() => runFloodBench(settings));
    const verdicts = [
      ...(results ? floodVerdicts(results).map((v) => ({ ...v, target: `outside flood: ${v.target}` })) : []),
      ...scenarios.flatMap((r) => r.verdicts.map((v) => ({ ...v, target: `${r.name}: ${v.target}` }))),
    ];
    return {
      data: { ...results, scenarios },
      markdown: [...(results ? [floodMarkdown(results)] : []), ...scenarios.map(scenarioMarkdown)].join(
        '\n\n',
      ),
      // BENCHMARKS.md: every target of the floods in one table; who got what stays in the run's file.
      brief: [
        `### The login path under a flood (${settings.concurrency} attempts in flight for ${settings.durationMs / 1000} s; \`npm run bench:flood\`)`,
        '',
        guardTable(
          verdicts.map((v) => ({ target: v.target, measured: v.measured, met: v.held })),
          'Target',
        ),
      ].join('\n'),
    };
  },
};

/** The outside flood's figures, then each of its targets with what was measured and whether it held. */
export function floodMarkdown(r: FloodResults): string {
  const ms = (v: number) => `${v.toLocaleString('en-US', { maximumFractionDigits: 1 })}`;
  const statuses = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([key, n]) => `${key} × ${n}`)
      .join(', ');
  const { knownDevice, unknownDevice, signedIn } = r.owners;
  const serverEnv = Object.entries(r.settings.serverEnv).map(([name, value]) => `${name}=${value}`);
  return [
    `### The login path under a credential-stuffing flood (${r.settings.concurrency} attempts in flight for ${r.settings.durationMs / 1000} s, each from a new address for a new account; \`npm start\` with TRUST_PROXY=127.0.0.1${serverEnv.length > 0 ? `, ${serverEnv.join(', ')}` : ''}, not pinned)`,
    '',
    table(
      ['Who', 'Requests', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'Answers'],
      [
        ['attacker', r.attack.attempts, r.attack.latencyMs, r.attack.byStatus] as const,
        [
          'owner, known device, signs in every 250 ms',
          knownDevice.requests,
          knownDevice.latencyMs,
          knownDevice.byStatus,
        ] as const,
        [
          'owner, unknown device, signs in every 250 ms',
          unknownDevice.requests,
          unknownDevice.latencyMs,
          unknownDevice.byStatus,
        ] as const,
        [
          'signed in, `GET /api/auth/me` every 200 ms',
          signedIn.requests,
          signedIn.latencyMs,
          signedIn.byStatus,
        ] as const,
      ].map(([who, n, l, counts]) => [
        who,
        String(n),
        ms(l.p50),
        ms(l.p95),
        ms(l.p99),
        ms(l.max),
        statuses(counts),
      ]),
    ),
    '',
    `Attempts ${r.attack.perSecond}/s, ${(r.attack.shedShare * 100).toFixed(1)} % shed; password checks ${r.checksPerSecond}/s under the flood against ${r.machineChecksPerSecond}/s on the machine alone (${r.machineChecksRange.join('–')} before and after), ${r.machineChecksLeftPerSecond}/s of it left by the load generators' ${r.loadGeneratorCores} cores; ` +
      `server peak RSS ${r.peakRssMb} MB; load average (1 min) ${r.load.before.toFixed(2)} before, ${r.load.after.toFixed(2)} after.`,
    '',
    `${heapSummary(r.heap)}.`,
    '',
    guardTable(
      floodVerdicts(r).map((v) => ({ target: v.target, measured: v.measured, met: v.held })),
      'Target',
    ),
  ].join('\n');
}

/** A scenario of the flood bench (bench/flood/): its heading, its table, its targets. */
export function scenarioMarkdown(r: ScenarioResults): string {
  return [
    `### ${r.title}`,
    '',
    r.table,
    '',
    guardTable(
      r.verdicts.map((v) => ({ target: v.target, measured: v.measured, met: v.held })),
      'Target',
    ),
  ].join('\n');
}
