// The proved-work scenario (docs/rules.md#proved-work): a person solves what LOGIN_BUSY asks and gets in.
//
// Two floods of FLOOD_CONCURRENCY attempts in flight, each on a server of its own, each attempt from
// a new address for a new account. In the first the attackers prove no work; in the second they
// solve every challenge they are asked (node:crypto, their fastest in JavaScript) and come back
// with it. Meanwhile carol signs in from a new browser every 250 ms, timed from her first attempt to
// her answer, solving what she is asked with the page's own client and solver (src/client).
import { fileURLToPath } from 'node:url';
import { solveInSlices, type WorkSolver } from '../../src/client/index.ts';
import { table } from '../lib/report.ts';
import {
  Browser,
  CAROL,
  counts,
  type FloodScenario,
  type FloodSettings,
  log,
  outcome,
  PASSWORD,
  percentiles,
  runAttackers,
  type ScenarioResults,
  startServer,
  tally,
} from './kit.ts';
import { machineChecksPerSecond } from './machine-checks.ts';
import type { AttackWork } from './proved-work-attackers.ts';

const P95_TARGET_MS = 5000;
/** The attackers' process: a file of its own, run as a script. */
const ATTACKERS = fileURLToPath(new URL('./proved-work-attackers.ts', import.meta.url));
/** A sign-in not answered 200 or 401 by then is given up (and counts against the target). */
const GIVE_UP_MS = 30_000;

function startAttackers(settings: FloodSettings, port: number, solve: boolean): Promise<AttackWork> {
  const args = [String(port), String(settings.concurrency), String(settings.durationMs), solve ? '1' : '0'];
  return runAttackers<AttackWork>(settings, ATTACKERS, args);
}

interface Owner {
  readonly latencies: number[];
  readonly byStatus: Record<string, number>;
  /** Challenges she solved, and their hashes. */
  solved: number;
  hashes: number;
}

/**
 * Carol from a new browser: from her first attempt to 200 (or another final answer), solving what
 * she is asked as the portal does (the client's own rounds and the page's solver); a LOGIN_BUSY
 * without work, or after the client's rounds, is tried again after its Retry-After.
 */
async function newBrowserSignIn(port: number, owner: Owner): Promise<void> {
  const browser = new Browser(port);
  await browser.csrf(); // untimed: a new browser's first page load
  const solve: WorkSolver = async (asked, signal) => {
    const found = await solveInSlices(asked, signal);
    owner.solved++;
    owner.hashes += found.hashes;
    return found;
  };
  const t0 = performance.now();
  for (;;) {
    const answer = await browser.login(CAROL, PASSWORD, solve);
    if (answer.status !== 503 || performance.now() - t0 > GIVE_UP_MS) {
      owner.latencies.push(performance.now() - t0);
      tally(owner.byStatus, outcome(answer));
      return;
    }
    if (!answer.work) await new Promise((resolve) => setTimeout(resolve, (answer.retryAfter ?? 1) * 1000));
  }
}

async function floodWithOwner(settings: FloodSettings, solve: boolean) {
  const server = await startServer(settings);
  const { port } = server;
  log(
    `proved-work: ${settings.concurrency} attackers ${solve ? 'solving' : 'proving no work'} on port ${port}`,
  );
  try {
    const owner: Owner = { latencies: [], byStatus: {}, solved: 0, hashes: 0 };
    const end = performance.now() + settings.durationMs;
    const attackers = startAttackers(settings, port, solve);
    const carol = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1000)); // let the flood build first
      while (performance.now() < end) {
        await newBrowserSignIn(port, owner).catch(() => tally(owner.byStatus, 'transport error'));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    const [attack] = await Promise.all([attackers, carol()]);
    return { owner, attack, peakRssMb: server.peakRssMb() };
  } finally {
    await server.stop();
  }
}

export const provedWorkScenario: FloodScenario = {
  name: 'proved-work',
  async run(settings: FloodSettings): Promise<ScenarioResults> {
    const checkMs = 1000 / (await machineChecksPerSecond(1, 2000, { ...process.env, ...settings.serverEnv }));
    const plain = await floodWithOwner(settings, false);
    const solving = await floodWithOwner(settings, true);
    const ms = (o: Owner) => percentiles(o.latencies);
    const everyTime = (o: Owner) =>
      o.latencies.length > 0 &&
      Object.keys(o.byStatus).every((s) => s === '200') &&
      ms(o).p95 <= P95_TARGET_MS;
    const a = solving.attack;
    const rate = Math.max(a.hashesPerCoreSecond, 1e-9);
    const perAdmitted = a.hashes / Math.max(1, a.admitted);
    const costMs = (perAdmitted / rate) * 1000;
    const verdicts = [
      {
        target: `new browser solving what it is asked, ${settings.concurrency} attempts in flight proving no work: every sign-in 200, p95 ≤ ${P95_TARGET_MS} ms`,
        measured: `${counts(plain.owner.byStatus)}; p95 ${ms(plain.owner).p95} ms`,
        held: everyTime(plain.owner),
      },
    ];
    const rows = [
      ['carol, a new browser, attackers proving no work', plain.owner, plain.attack],
      ['carol, a new browser, attackers solving the asked effort', solving.owner, solving.attack],
    ] as const;
    const summary = [
      ...rows.map(
        ([who, o, atk]) =>
          `${who}: ${o.latencies.length} sign-ins, p50 ${ms(o).p50} ms, p95 ${ms(o).p95} ms, max ${ms(o).max} ms (${counts(o.byStatus)}); she solved ${o.solved} challenges, ${o.hashes} hashes; attackers ${atk.attempts} attempts, ${atk.admitted} checked, bits last ${atk.lastBits}, most ${atk.maxBits}`,
      ),
      `attackers solving: ${a.hashes} hashes, ${Math.round(rate)} hashes/s on one core alone, ${Math.round(perAdmitted)} hashes per admitted attempt = ${costMs.toFixed(0)} ms of a core against ${checkMs.toFixed(0)} ms of ours per check`,
    ];
    return {
      name: 'proved-work',
      title: `Proved work: ${settings.concurrency} attempts in flight for ${settings.durationMs / 1000} s, a new browser that solves; then the same flood solving`,
      table: table(
        ['Who', 'Sign-ins', 'p50 ms', 'p95 ms', 'max ms', 'Answers', 'Her hashes', 'Bits (last / most)'],
        rows.map(([who, o, atk]) => [
          who,
          String(o.latencies.length),
          String(ms(o).p50),
          String(ms(o).p95),
          String(ms(o).max),
          counts(o.byStatus),
          String(o.hashes),
          `${atk.lastBits} / ${atk.maxBits}`,
        ]),
      ),
      summary,
      verdicts,
      data: {
        checkMs,
        plain: { owner: { ...ms(plain.owner), byStatus: plain.owner.byStatus }, attack: plain.attack },
        solving: {
          owner: { ...ms(solving.owner), byStatus: solving.owner.byStatus },
          attack: solving.attack,
          hashesPerSecond: rate,
          hashesPerAdmitted: perAdmitted,
          costPerAdmittedMs: costMs,
        },
      },
    };
  },
};
