// The insider scenario (docs/rules.md#the-login-gate): one account's many sign-ins beside a new device's.
//
// No outside flood: bob, an ordinary employee, keeps INSIDER_IN_FLIGHT sign-ins to his own account
// in flight, each from a browser of his that signed in before (a known device; the right password,
// so each success mints another device cookie), and sends the next as soon as one is answered.
// Meanwhile carol signs in from a new browser every second. Before the gate counted runnable work,
// bob's backlog alone made every one of carol's sign-ins shed (503 LOGIN_BUSY).

import { table } from '../lib/report.ts';
import {
  BOB,
  Browser,
  CAROL,
  counts,
  type FloodScenario,
  type FloodSettings,
  log,
  outcome,
  PASSWORD,
  percentiles,
  type ScenarioResults,
  startServer,
  tally,
} from './kit.ts';

/** bob's sign-ins in flight, as in the report that found the hole. */
const INSIDER_IN_FLIGHT = Number(process.env.INSIDER_N ?? 100);
/** carol, from a new browser, once a second. */
const NEWCOMER_EVERY_MS = 1000;
const P95_TARGET_MS = 300;

export const insiderScenario: FloodScenario = {
  name: 'insider',
  async run(settings: FloodSettings): Promise<ScenarioResults> {
    const server = await startServer(settings);
    const { port } = server;
    log(
      `insider: server on port ${port} (pid ${server.pid}); ${INSIDER_IN_FLIGHT} of bob's browsers sign in first`,
    );
    let transportErrors = 0;
    try {
      const bobs: Browser[] = [];
      for (let i = 0; i < INSIDER_IN_FLIGHT; i++) {
        const browser = new Browser(port);
        await browser.csrf();
        if ((await browser.login(BOB, PASSWORD)).status !== 200) throw new Error('bob could not sign in');
        bobs.push(browser);
      }
      const insider = { latencies: [] as number[], byStatus: {} as Record<string, number> };
      const newcomer = { latencies: [] as number[], byStatus: {} as Record<string, number> };
      const end = performance.now() + settings.durationMs;
      const running = () => performance.now() < end;
      const loop = async (browser: Browser) => {
        while (running()) {
          const t0 = performance.now();
          try {
            const answer = await browser.login(BOB, PASSWORD);
            insider.latencies.push(performance.now() - t0);
            tally(insider.byStatus, outcome(answer));
          } catch {
            transportErrors++;
          }
        }
      };
      const carol = async () => {
        await new Promise((resolve) => setTimeout(resolve, 1000)); // let bob's backlog build first
        while (running()) {
          const browser = new Browser(port);
          try {
            await browser.csrf(); // untimed: a new browser's first page load
            const t0 = performance.now();
            const answer = await browser.login(CAROL, PASSWORD);
            newcomer.latencies.push(performance.now() - t0);
            tally(newcomer.byStatus, outcome(answer));
          } catch {
            transportErrors++;
          }
          await new Promise((resolve) => setTimeout(resolve, NEWCOMER_EVERY_MS));
        }
      };
      log(`insider: ${INSIDER_IN_FLIGHT} sign-ins in flight for ${settings.durationMs / 1000} s`);
      await Promise.all([...bobs.map(loop), carol()]);
      return insiderResults(settings, insider, newcomer, transportErrors, server.peakRssMb());
    } finally {
      await server.stop();
    }
  },
};

function insiderResults(
  settings: FloodSettings,
  insider: { latencies: number[]; byStatus: Record<string, number> },
  newcomer: { latencies: number[]; byStatus: Record<string, number> },
  transportErrors: number,
  peakRssMb: number,
): ScenarioResults {
  const insiderMs = percentiles(insider.latencies);
  const newcomerMs = percentiles(newcomer.latencies);
  const statuses = Object.keys(newcomer.byStatus);
  const verdicts = [
    {
      target: `new device beside an insider's ${INSIDER_IN_FLIGHT} sign-ins: every one 200, p95 ≤ ${P95_TARGET_MS} ms`,
      measured: `${counts(newcomer.byStatus)}; p95 ${newcomerMs.p95} ms`,
      held:
        newcomer.latencies.length > 0 &&
        statuses.every((s) => s === '200') &&
        newcomerMs.p95 <= P95_TARGET_MS,
    },
    {
      target: 'the insider: no 5xx, no reset connection',
      measured: `${counts(insider.byStatus)}; ${transportErrors} transport errors`,
      held: Object.keys(insider.byStatus).every((s) => !s.startsWith('5')) && transportErrors === 0,
    },
  ];
  const rows = [
    ['bob, his own account from his own devices', insider.latencies.length, insiderMs, insider.byStatus],
    ['carol, a new browser every second', newcomer.latencies.length, newcomerMs, newcomer.byStatus],
  ] as const;
  const title = `The insider: ${INSIDER_IN_FLIGHT} sign-ins of one account to itself in flight for ${settings.durationMs / 1000} s, no outside flood`;
  return {
    name: 'insider',
    title,
    data: {
      insider: { ...insiderMs, byStatus: insider.byStatus },
      newcomer: { ...newcomerMs, byStatus: newcomer.byStatus },
      transportErrors,
      peakRssMb,
    },
    table: table(
      ['Who', 'Requests', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'Answers'],
      rows.map(([who, n, l, byStatus]) => [
        who,
        String(n),
        String(l.p50),
        String(l.p95),
        String(l.p99),
        String(l.max),
        counts(byStatus),
      ]),
    ),
    summary: rows.map(
      ([who, n, l, byStatus]) =>
        `${who}: ${n} sign-ins, p50 ${l.p50} ms, p95 ${l.p95} ms, max ${l.max} ms (${counts(byStatus)})`,
    ),
    verdicts,
  };
}
