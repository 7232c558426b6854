// npm run bench:flood: the outside flood and the scenarios after it (index.ts), figures and targets.
//
// Knobs: FLOOD_CONCURRENCY (256), FLOOD_DURATION (30s), FLOOD_SERVER_DIR (the checkout whose
// src/server.ts runs; default this one), FLOOD_ENV (extra server variables, `A=1,B=2`),
// FLOOD_ATTACKER_NICE (0), FLOOD_JSON (a file to write the figures to), FLOOD_SCENARIOS (which to
// run: `outside` and the scenarios' names, comma-separated; default all of them).
import { writeFileSync } from 'node:fs';
import { floodSettings, runFloodBench } from './index.ts';
import type { ScenarioResults } from './kit.ts';
import { floodSummary } from './outside.ts';

/** A scenario's figures and verdicts for the console. */
function scenarioSummary(r: ScenarioResults): string {
  return [
    `${r.name}: ${r.title}`,
    ...r.summary,
    ...r.verdicts.map((v) => `${v.held ? 'held  ' : 'MISSED'} ${v.target}: ${v.measured}`),
  ].join('\n');
}

const { outside, scenarios } = await runFloodBench(floodSettings());
if (outside) console.log(floodSummary(outside));
for (const scenario of scenarios) console.log(`\n${scenarioSummary(scenario)}`);
if (process.env.FLOOD_JSON)
  writeFileSync(process.env.FLOOD_JSON, `${JSON.stringify({ ...outside, scenarios }, null, 2)}\n`);
process.exit(0); // idle keep-alive connections would hold the process open
