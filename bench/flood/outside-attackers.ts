// The outside flood's attackers (outside.ts), in a process of their own: new addresses, new accounts.
import { fileURLToPath } from 'node:url';
import { address, Browser, cpuSeconds, outcome, type Percentiles, percentiles, tally } from './kit.ts';

/** What the attackers' process reports when the flood ends. */
export interface AttackFigures {
  readonly attempts: number;
  readonly byStatus: Record<string, number>;
  /** Attempts answered 401 or 200: each cost a password check. */
  readonly checked: number;
  readonly latencyMs: Percentiles;
  readonly transportErrors: number;
  /** CPU time the attackers spent during the flood (user + system), seconds. */
  readonly cpuSeconds: number;
}

export const ATTACKERS = fileURLToPath(import.meta.url);

/** `concurrency` attempts in flight for `durationMs`, each from a new address for a new account. */
async function attack(port: number, concurrency: number, durationMs: number): Promise<AttackFigures> {
  const latencies: number[] = [];
  const byStatus: Record<string, number> = {};
  let checked = 0;
  let transportErrors = 0;
  let next = 0;
  const startCpu = process.cpuUsage();
  const end = performance.now() + durationMs;
  const attacker = async () => {
    // One pre-session CSRF token per attacker connection, reused: fetching it costs nothing.
    const browser = new Browser(port);
    browser.forwardedFor = address(next++);
    await browser.csrf();
    while (performance.now() < end) {
      const n = next++;
      browser.forwardedFor = address(n);
      const t0 = performance.now();
      try {
        const answer = await browser.login(`user${n}@flood.example`, `guess-${n}`);
        if (performance.now() > end) break;
        latencies.push(performance.now() - t0);
        tally(byStatus, outcome(answer));
        if (answer.status === 401 || answer.status === 200) checked++;
      } catch {
        transportErrors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, attacker));
  return {
    attempts: latencies.length,
    byStatus,
    checked,
    latencyMs: percentiles(latencies),
    transportErrors,
    cpuSeconds: cpuSeconds(process.cpuUsage(startCpu)),
  };
}

if (process.argv[1] === ATTACKERS) {
  const [port, concurrency, durationMs] = process.argv.slice(2).map(Number) as [number, number, number];
  console.log(JSON.stringify(await attack(port, concurrency, durationMs)));
  process.exit(0); // idle keep-alive connections would hold the process open
}
