// The outside flood (docs/rules.md#the-login-gate): credential stuffing, and what the owners get meanwhile.
//
// The server runs as `npm start` runs it, with TRUST_PROXY=127.0.0.1 and a fresh embedded database.
// FLOOD_CONCURRENCY attempts (256) stay in flight for FLOOD_DURATION (30s), each from a new
// X-Forwarded-For address for a new account, each with a valid CSRF token: no address or account
// budget ever fills. Meanwhile alice signs in again and again from the browser she used before (a
// known device), carol from a fresh browser each time (an unknown device), and bob, signed in, asks
// GET /api/auth/me every 200 ms; the companions (index.ts) run beside them. Before and after, the
// machine's own rate of password checks is measured alone (machine-checks.ts).
import { availableParallelism, loadavg } from 'node:os';
import {
  ALICE,
  type Answer,
  BOB,
  Browser,
  CAROL,
  counts,
  cpuSeconds,
  type FloodCompanion,
  type FloodSettings,
  followHeap,
  type HeapTrend,
  heapSummary,
  log,
  type OwnerFigures,
  outcome,
  PASSWORD,
  type Percentiles,
  percentiles,
  REPO,
  round,
  runAttackers,
  startServer,
  tally,
  type Verdict,
} from './kit.ts';
import { checksAlone } from './machine-checks.ts';
import { ATTACKERS, type AttackFigures } from './outside-attackers.ts';

export interface FloodResults {
  readonly date: string;
  readonly settings: Omit<FloodSettings, 'serverDir'> & { serverDir: string };
  /** The 1-minute load average before and after the run (the machine may be shared). */
  readonly load: { readonly before: number; readonly after: number };
  /** The mean of two measurements, before and after the flood (the machine's own speed drifts). */
  readonly machineChecksPerSecond: number;
  readonly machineChecksRange: readonly [number, number];
  /**
   * Cores the load generators took during the flood (the attackers' process and this one's
   * owners): on this one machine they take CPU from the checks, where a real flood's attackers
   * run on machines of their own.
   */
  readonly loadGeneratorCores: number;
  /** The machine's checks/s alone, less the load generators' share of its cores. */
  readonly machineChecksLeftPerSecond: number;
  readonly attack: {
    readonly attempts: number;
    readonly perSecond: number;
    readonly byStatus: Record<string, number>;
    readonly shedShare: number;
    readonly latencyMs: Percentiles;
  };
  /** Password checks the server ran per second under the flood (answers that were checked: 200 and 401). */
  readonly checksPerSecond: number;
  /** checksPerSecond / machineChecksLeftPerSecond. */
  readonly checksShareOfMachine: number;
  readonly owners: {
    readonly knownDevice: OwnerFigures;
    readonly unknownDevice: OwnerFigures;
    readonly signedIn: OwnerFigures;
  };
  /** The registered companions' figures, by name. */
  readonly companions: Readonly<Record<string, OwnerFigures>>;
  /** Connections reset or refused, and requests that got no answer. */
  readonly transportErrors: number;
  readonly peakRssMb: number;
  /** The server's heap over the flood, and its trend. */
  readonly heap: HeapTrend;
}

/** The outside flood on a server of its own, `companions` beside its owners. */
export async function runFlood(
  settings: FloodSettings,
  companions: readonly FloodCompanion[],
): Promise<FloodResults> {
  const loadBefore = loadavg()[0]!;
  const threads = Number(settings.serverEnv.LOGIN_HASH_CONCURRENCY ?? availableParallelism());
  log(`measuring the machine's password checks alone (${threads} at once, 5 s)`);
  const aloneBefore = await checksAlone(settings, threads);
  log(`${aloneBefore.toFixed(1)} checks/s alone`);

  const server = await startServer(settings);
  const { port } = server;
  log(`server ${settings.serverDir} on port ${port} (pid ${server.pid})`);
  let transportErrors = 0;
  try {
    // The owners, before the flood: alice's browser becomes a known device, bob signs in.
    const alice = new Browser(port);
    await alice.csrf();
    if ((await alice.login(ALICE, PASSWORD)).status !== 200) throw new Error('alice could not sign in');
    const bob = new Browser(port);
    await bob.csrf();
    if ((await bob.login(BOB, PASSWORD)).status !== 200) throw new Error('bob could not sign in');
    for (const companion of companions) await companion.setUp(port);

    const owners = {
      knownDevice: { latencies: [] as number[], byStatus: {} as Record<string, number> },
      unknownDevice: { latencies: [] as number[], byStatus: {} as Record<string, number> },
      signedIn: { latencies: [] as number[], byStatus: {} as Record<string, number> },
    };
    const started = performance.now();
    const ownCpu = process.cpuUsage();
    const end = started + settings.durationMs;
    const running = () => performance.now() < end;
    const attackers = runAttackers<AttackFigures>(settings, ATTACKERS, [
      String(port),
      String(settings.concurrency),
      String(settings.durationMs),
    ]);
    const heap = followHeap(server.heapUsedMb, running);
    /** An owner's sign-in, timed, again and again with `pauseMs` between, until the flood ends. */
    const owner = async (
      figures: (typeof owners)['knownDevice'],
      once: () => Promise<Answer>,
      pauseMs: number,
      prepare: () => Promise<void> = async () => {},
    ) => {
      await new Promise((resolve) => setTimeout(resolve, 1000)); // let the flood build first
      while (running()) {
        try {
          await prepare();
        } catch {
          transportErrors++;
        }
        const t0 = performance.now();
        try {
          const answer = await once();
          figures.latencies.push(performance.now() - t0);
          tally(figures.byStatus, outcome(answer));
        } catch {
          transportErrors++;
        }
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    };
    let carol = new Browser(port);
    log(`flood: ${settings.concurrency} attempts in flight for ${settings.durationMs / 1000} s`);
    const beside = Promise.all(companions.map((companion) => companion.during(port, running)));
    const [attack] = await Promise.all([
      attackers,
      owner(owners.knownDevice, () => alice.login(ALICE, PASSWORD), 250),
      owner(
        owners.unknownDevice,
        () => carol.login(CAROL, PASSWORD),
        250,
        // A fresh browser for every attempt: never a known device. Its CSRF token is fetched untimed.
        async () => {
          carol = new Browser(port);
          await carol.csrf();
        },
      ),
      owner(owners.signedIn, () => bob.me(), 200),
    ]);
    transportErrors += attack.transportErrors;
    const seconds = (Math.min(performance.now(), end) - started) / 1000;
    const generatorCores = (attack.cpuSeconds + cpuSeconds(process.cpuUsage(ownCpu))) / seconds;
    const attempts = attack.attempts;
    const shed = Object.entries(attack.byStatus)
      .filter(([key]) => key.startsWith('503 LOGIN_BUSY'))
      .reduce((sum, [, n]) => sum + n, 0);
    const checked =
      attack.checked +
      (owners.knownDevice.byStatus['200'] ?? 0) +
      (owners.unknownDevice.byStatus['200'] ?? 0);
    const figures = (f: (typeof owners)['knownDevice']): OwnerFigures => ({
      requests: f.latencies.length,
      byStatus: f.byStatus,
      latencyMs: percentiles(f.latencies),
    });
    const { serverDir: _dir, ...rest } = settings;
    // The server's peak, then the machine alone again with the server gone.
    const peakRssMb = server.peakRssMb();
    await server.stop();
    log('measuring the checks alone again');
    const aloneAfter = await checksAlone(settings, threads);
    const alone = (aloneBefore + aloneAfter) / 2;
    const cores = availableParallelism();
    const left = (alone * Math.max(0, cores - generatorCores)) / cores;
    return {
      date: new Date().toISOString(),
      settings: { ...rest, serverDir: settings.serverDir === REPO ? '.' : settings.serverDir },
      load: { before: loadBefore, after: loadavg()[0]! },
      machineChecksPerSecond: round(alone),
      machineChecksRange: [
        round(Math.min(aloneBefore, aloneAfter)),
        round(Math.max(aloneBefore, aloneAfter)),
      ],
      loadGeneratorCores: round(generatorCores, 2),
      machineChecksLeftPerSecond: round(left),
      attack: {
        attempts,
        perSecond: round(attempts / seconds),
        byStatus: attack.byStatus,
        shedShare: round(shed / Math.max(1, attempts), 3),
        latencyMs: attack.latencyMs,
      },
      checksPerSecond: round(checked / seconds),
      checksShareOfMachine: round(checked / seconds / left, 3),
      owners: {
        knownDevice: figures(owners.knownDevice),
        unknownDevice: figures(owners.unknownDevice),
        signedIn: figures(owners.signedIn),
      },
      companions: Object.fromEntries((await beside).map((f, i) => [companions[i]!.name, f])),
      transportErrors,
      peakRssMb: round(peakRssMb),
      heap: await heap,
    };
  } finally {
    await server.stop();
  }
}

/** The outside flood's targets (docs/rules.md#the-login-gate), each with what was measured and whether it held. */
export function floodVerdicts(r: FloodResults): Verdict[] {
  const statuses = (f: OwnerFigures) => Object.keys(f.byStatus);
  const fiveHundreds = [r.attack, r.owners.knownDevice, r.owners.unknownDevice, r.owners.signedIn].flatMap(
    (f) => Object.keys(f.byStatus).filter((key) => key.startsWith('5') && !key.endsWith('LOGIN_BUSY')),
  );
  const { knownDevice, unknownDevice, signedIn } = r.owners;
  return [
    {
      target: 'known-device owner: every attempt 200, p95 ≤ 300 ms',
      measured: `${counts(knownDevice.byStatus)}; p95 ${knownDevice.latencyMs.p95} ms`,
      held:
        knownDevice.requests > 0 &&
        statuses(knownDevice).every((s) => s === '200') &&
        knownDevice.latencyMs.p95 <= 300,
    },
    {
      target: 'unknown-device owner: every answer within 2 s, 200 or 503 LOGIN_BUSY with Retry-After',
      measured: `${counts(unknownDevice.byStatus)}; max ${unknownDevice.latencyMs.max} ms`,
      held:
        unknownDevice.requests > 0 &&
        statuses(unknownDevice).every((s) => s === '200' || s === '503 LOGIN_BUSY') &&
        unknownDevice.latencyMs.max <= 2000,
    },
    {
      target: 'signed-in traffic: p99 ≤ 50 ms, no errors',
      measured: `${counts(signedIn.byStatus)}; p99 ${signedIn.latencyMs.p99} ms`,
      held:
        signedIn.requests > 0 && statuses(signedIn).every((s) => s === '200') && signedIn.latencyMs.p99 <= 50,
    },
    {
      target: "checks/s under the flood within 10 % of the machine alone, less the load generators' cores",
      measured: `${r.checksPerSecond}/s vs ${r.machineChecksLeftPerSecond}/s (${(r.checksShareOfMachine * 100).toFixed(0)} %)`,
      held: r.checksShareOfMachine >= 0.9,
    },
    { target: 'peak RSS ≤ 350 MB', measured: `${r.peakRssMb} MB`, held: r.peakRssMb <= 350 },
    {
      target: 'no 5xx but 503 LOGIN_BUSY, no reset connection',
      measured: `${fiveHundreds.length === 0 ? 'no other 5xx' : fiveHundreds.join(', ')}; ${r.transportErrors} transport errors`,
      held: fiveHundreds.length === 0 && r.transportErrors === 0,
    },
  ];
}

export function floodSummary(r: FloodResults): string {
  const p = (x: Percentiles) => `p50 ${x.p50} ms, p95 ${x.p95} ms, max ${x.max} ms`;
  const statuses = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([key, n]) => `${key}: ${n}`)
      .join(', ');
  return [
    `load average (1 min) ${r.load.before.toFixed(2)} before, ${r.load.after.toFixed(2)} after`,
    `attack: ${r.attack.attempts} attempts, ${r.attack.perSecond}/s, shed ${(r.attack.shedShare * 100).toFixed(1)} %, ${p(r.attack.latencyMs)} (${statuses(r.attack.byStatus)})`,
    `known-device owner: ${r.owners.knownDevice.requests} sign-ins, ${p(r.owners.knownDevice.latencyMs)} (${statuses(r.owners.knownDevice.byStatus)})`,
    `unknown-device owner: ${r.owners.unknownDevice.requests} sign-ins, ${p(r.owners.unknownDevice.latencyMs)} (${statuses(r.owners.unknownDevice.byStatus)})`,
    `signed-in GET /api/auth/me: ${r.owners.signedIn.requests} requests, p99 ${r.owners.signedIn.latencyMs.p99} ms, max ${r.owners.signedIn.latencyMs.max} ms (${statuses(r.owners.signedIn.byStatus)})`,
    `checks: ${r.checksPerSecond}/s under the flood; alone ${r.machineChecksPerSecond}/s (${r.machineChecksRange.join('–')}), ${r.machineChecksLeftPerSecond}/s less the load generators' ${r.loadGeneratorCores} cores (${(r.checksShareOfMachine * 100).toFixed(0)} %)`,
    ...Object.entries(r.companions).map(
      ([name, f]) => `${name}: ${f.requests} requests, ${p(f.latencyMs)} (${statuses(f.byStatus)})`,
    ),
    `peak RSS ${r.peakRssMb} MB; transport errors ${r.transportErrors}`,
    heapSummary(r.heap),
    ...floodVerdicts(r).map((v) => `${v.held ? 'held  ' : 'MISSED'} ${v.target}`),
  ].join('\n');
}
