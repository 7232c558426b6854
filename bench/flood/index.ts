// The flood bench's list: the companions beside the outside flood and the scenarios after it, and settings.
import { insiderScenario } from './insider.ts';
import type { FloodCompanion, FloodScenario, FloodSettings, ScenarioResults } from './kit.ts';
import { REPO } from './kit.ts';
import { type FloodResults, runFlood } from './outside.ts';
import { passkeyCompanion } from './passkey.ts';
import { provedWorkScenario } from './proved-work.ts';

/** Beside the outside flood's owners, on its server and during it. */
export const FLOOD_COMPANIONS: readonly FloodCompanion[] = [passkeyCompanion];

/** After the outside flood, each on a server of its own, in this order. */
export const FLOOD_SCENARIOS: readonly FloodScenario[] = [insiderScenario, provedWorkScenario];

/** What `settings.scenarios` asks for: the outside flood (`outside`) with its companions, then the scenarios it names. */
export async function runFloodBench(
  settings: FloodSettings,
): Promise<{ outside: FloodResults | null; scenarios: ScenarioResults[] }> {
  const outside = settings.scenarios.includes('outside') ? await runFlood(settings, FLOOD_COMPANIONS) : null;
  const scenarios: ScenarioResults[] = [];
  for (const scenario of FLOOD_SCENARIOS)
    if (settings.scenarios.includes(scenario.name)) scenarios.push(await scenario.run(settings));
  return { outside, scenarios };
}

/** FLOOD_* variables → settings. */
export function floodSettings(env: NodeJS.ProcessEnv = process.env): FloodSettings {
  const durationText = env.FLOOD_DURATION ?? '30s';
  const match = /^(\d+)(ms|s)$/.exec(durationText);
  if (!match) throw new Error(`FLOOD_DURATION=${durationText}: expected a duration such as 30s`);
  const serverEnv = Object.fromEntries(
    (env.FLOOD_ENV ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  return {
    concurrency: Number(env.FLOOD_CONCURRENCY ?? 256),
    attackerNice: Number(env.FLOOD_ATTACKER_NICE ?? 0),
    durationMs: Number(match[1]) * (match[2] === 's' ? 1000 : 1),
    serverDir: env.FLOOD_SERVER_DIR ?? REPO,
    serverEnv,
    scenarios: (env.FLOOD_SCENARIOS ?? ['outside', ...FLOOD_SCENARIOS.map((s) => s.name)].join(','))
      .split(',')
      .filter(Boolean),
  };
}
