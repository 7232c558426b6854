// npm run bench:flood: a credential-stuffing flood against the started server (contract §11), and what its owners get meanwhile.
//
// The server runs as `npm start` runs it, with TRUST_PROXY=127.0.0.1 and a fresh embedded database.
// FLOOD_CONCURRENCY attempts (256) stay in flight for FLOOD_DURATION (30s), each from a new
// X-Forwarded-For address for a new account, each with a valid CSRF token: no address or account
// budget ever fills. Meanwhile alice signs in again and again from the browser she used before (a
// known device), carol from a fresh browser each time (an unknown device), and bob, signed in, asks
// GET /api/auth/me every 200 ms. Before all that, the machine's own rate of password checks is
// measured alone, with the server's argon2id parameters on as many threads as the gate allows.
//
// Knobs: FLOOD_CONCURRENCY, FLOOD_DURATION (e.g. 30s), FLOOD_SERVER_DIR (the checkout whose
// src/server.ts runs; default this one), FLOOD_ENV (extra server variables, `A=1,B=2`),
// FLOOD_JSON (a file to write the figures to), FLOOD_SCENARIOS (which to run: `outside` for this
// flood and the names of FLOOD_SCENARIO_LIST's, comma-separated; default all of them).
import { spawn } from 'node:child_process';
import { argon2, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/redis-server.ts';
import { FLOOD_COMPANIONS } from './flood-companions.ts';
import { insiderScenario } from './flood-insider.ts';
import { provedWorkScenario } from './flood-proved-work.ts';

const REPO = fileURLToPath(new URL('../', import.meta.url));
export const PASSWORD = 'demo-password';
const ALICE = 'alice@example.com';
export const BOB = 'bob@example.com';
export const CAROL = 'carol@example.com';
/** The server's argon2id memory (PASSWORD_HASH_COST's default) and passes. */
const HASH_MEMORY_KIB = 19_456;
const HASH_PASSES = 2;

export const log = (message: string) => console.error(`[flood] ${message}`);

export interface FloodSettings {
  readonly concurrency: number;
  /** The attackers' process runs at this niceness (0: the server's own priority). */
  readonly attackerNice: number;
  readonly durationMs: number;
  readonly serverDir: string;
  readonly serverEnv: Readonly<Record<string, string>>;
  /** What to run: `outside` (the flood of this file) and scenarios of FLOOD_SCENARIO_LIST by name. */
  readonly scenarios: readonly string[];
}

/** A scenario run after the outside flood, on a server of its own, in a file of its own (bench/flood-*.ts). */
export interface FloodScenario {
  readonly name: string;
  run(settings: FloodSettings): Promise<ScenarioResults>;
}

export interface ScenarioResults {
  readonly name: string;
  /** A heading for the Markdown report. */
  readonly title: string;
  /** Who asked what and what they got, as a Markdown table. */
  readonly table: string;
  /** The same, a line each, for the console. */
  readonly summary: readonly string[];
  readonly verdicts: readonly { target: string; measured: string; held: boolean }[];
  /** The figures, for benchmarks-run.json. */
  readonly data: unknown;
}

/** The scenarios after the outside flood, in the order they run: one line each registers one. */
export const FLOOD_SCENARIO_LIST: readonly FloodScenario[] = [insiderScenario, provedWorkScenario];

/** Runs the scenarios `settings.scenarios` names, one after the other. */
export async function runFloodScenarios(settings: FloodSettings): Promise<ScenarioResults[]> {
  const results: ScenarioResults[] = [];
  for (const scenario of FLOOD_SCENARIO_LIST)
    if (settings.scenarios.includes(scenario.name)) results.push(await scenario.run(settings));
  return results;
}

/** A scenario's figures and verdicts for the console. */
export function scenarioSummary(r: ScenarioResults): string {
  return [
    `${r.name}: ${r.title}`,
    ...r.summary,
    ...r.verdicts.map((v) => `${v.held ? 'held  ' : 'MISSED'} ${v.target}: ${v.measured}`),
  ].join('\n');
}

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

/**
 * A companion runs beside the owners during the outside flood (a scenario runs after it, on a
 * server of its own), kept in a file of its own (bench/flood-*.ts) and registered in
 * FLOOD_COMPANIONS (bench/flood-companions.ts); its figures are reported under its name.
 */
export interface FloodCompanion {
  readonly name: string;
  /** Before the flood, on the started server (say, a passkey to sign in with). */
  setUp(port: number): Promise<void>;
  /** During the flood, until `running()` turns false: the timed requests and their answers. */
  during(port: number, running: () => boolean): Promise<OwnerFigures>;
}

export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

export interface OwnerFigures {
  readonly requests: number;
  readonly byStatus: Record<string, number>;
  readonly latencyMs: Percentiles;
}

export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

function request(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A browser's cookies and CSRF token; with `address`, every request says it comes from there
 * (`X-Forwarded-For`, which the bench's server believes from 127.0.0.1).
 */
export class Browser {
  private readonly cookies = new Map<string, string>();
  token = '';
  readonly port: number;
  private readonly from: Record<string, string>;

  constructor(port: number, address?: string) {
    this.port = port;
    this.from = address === undefined ? {} : { 'x-forwarded-for': address };
  }

  private header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(answer: Answer): void {
    for (const line of answer.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async csrf(extra: Record<string, string> = {}): Promise<void> {
    const answer = await request(this.port, 'GET', '/api/csrf-token', {
      cookie: this.header(),
      ...this.from,
      ...extra,
    });
    this.keep(answer);
    this.token = (JSON.parse(answer.body) as { csrfToken: string }).csrfToken;
  }

  /** Signs in; `more` joins the body (proved work's `work`, contract §15). */
  async login(
    email: string,
    password: string,
    extra: Record<string, string> = {},
    more: Record<string, unknown> = {},
  ): Promise<Answer> {
    const body = JSON.stringify({ email, password, ...more });
    const answer = await request(
      this.port,
      'POST',
      '/api/auth/login',
      {
        cookie: this.header(),
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-csrf-token': this.token,
        ...this.from,
        ...extra,
      },
      body,
    );
    this.keep(answer);
    if (answer.status === 200) this.token = (JSON.parse(answer.body) as { csrfToken: string }).csrfToken;
    return answer;
  }

  /** An unsafe request with this browser's cookies and CSRF token, `body` as JSON when given. */
  async post(path: string, body?: unknown): Promise<Answer> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {
      cookie: this.header(),
      'x-csrf-token': this.token,
      ...this.from,
    };
    if (text !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(text));
    }
    const answer = await request(this.port, 'POST', path, headers, text);
    this.keep(answer);
    return answer;
  }

  async get(path: string): Promise<Answer> {
    const answer = await request(this.port, 'GET', path, { cookie: this.header(), ...this.from });
    this.keep(answer);
    return answer;
  }
}

export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: 0, p95: 0, p99: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const round = (v: number) => Math.round(v * 10) / 10;
  return { p50: round(at(0.5)), p95: round(at(0.95)), p99: round(at(0.99)), max: round(sorted.at(-1)!) };
}

export const tally = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/**
 * An answer as it is counted: its status, its code when it is an error, and a shed attempt
 * without the Retry-After the contract promises is counted apart (so the targets see it).
 */
export function outcome(answer: Answer): string {
  if (answer.status < 400) return String(answer.status);
  let code: string | undefined;
  try {
    code = (JSON.parse(answer.body) as { code?: string }).code;
  } catch {
    // not a JSON error body: counted by its status alone
  }
  const label = code ? `${answer.status} ${code}` : String(answer.status);
  return code === 'LOGIN_BUSY' && !answer.headers['retry-after'] ? `${label} without Retry-After` : label;
}

/** User + system seconds of a `process.cpuUsage()` reading. */
export const cpuSeconds = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1e6;

/** Password checks per second on this machine alone: `threads` argon2id checks in flight for `ms`. */
export async function machineChecksPerSecond(threads: number, ms = 5000): Promise<number> {
  const salt = randomBytes(16);
  const one = () =>
    new Promise<void>((resolve, reject) =>
      argon2(
        'argon2id',
        {
          message: PASSWORD,
          nonce: salt,
          memory: HASH_MEMORY_KIB,
          passes: HASH_PASSES,
          parallelism: 1,
          tagLength: 32,
        },
        (error) => (error ? reject(error) : resolve()),
      ),
    );
  await one(); // warm up
  let done = 0;
  const started = performance.now();
  const end = started + ms;
  await Promise.all(
    Array.from({ length: threads }, async () => {
      while (performance.now() < end) {
        await one();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/** The server's environment as `npm start` sets it (its allocator setting changes what a check costs). */
const START_ENV = {
  MALLOC_ARENA_MAX: '1',
  NODE_COMPILE_CACHE: 'node_modules/.cache/node-compile',
};

/** The machine's checks/s alone, in a process of its own with the server's environment. */
async function checksAlone(settings: FloodSettings, threads: number): Promise<number> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'alone', String(threads)], {
    env: { ...process.env, ...START_ENV, ...settings.serverEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`measuring the checks alone exited with ${code}`);
  return Number(out);
}

/** A server as bench:flood starts it, on a free port, for a measurement of its own; `stop` also closes the connections. */
export async function startQuietServer(settings: FloodSettings) {
  const port = await freePort();
  const server = await startServer(settings, port);
  return {
    ...server,
    port,
    stop: async () => {
      await server.stop();
      agent.destroy();
    },
  };
}

/** Starts the server of `dir` as `npm start` does, on a fresh embedded database; resolves once it answers. */
export async function startServer(settings: FloodSettings, port: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'flood-data-'));
  const metricsPort = await freePort();
  const child = spawn(process.execPath, ['src/server.ts'], {
    cwd: settings.serverDir,
    env: {
      ...process.env,
      ...START_ENV,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      TRUST_PROXY: '127.0.0.1',
      // The metrics listener on a free port (a fixed one could meet a server the bench left): the
      // server's heap is read from it.
      METRICS_PORT: String(metricsPort),
      ...settings.serverEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}\n${stderr}`);
    try {
      if ((await request(port, 'GET', '/healthz', {})).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server did not start within 180 s\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const peakRssMb = () => {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(force);
    rmSync(dataDir, { recursive: true, force: true });
  };
  /** The server's V8 heap in use (MB), from its /metrics; null when it does not say. */
  const heapUsedMb = async (): Promise<number | null> => {
    const port = Number(settings.serverEnv.METRICS_PORT ?? metricsPort);
    if (port === 0) return null;
    const answer = await request(port, 'GET', '/metrics', {});
    const bytes = /^nodejs_heap_size_used_bytes (\d+)/m.exec(answer.body)?.[1];
    return bytes === undefined ? null : Number(bytes) / 1048576;
  };
  return { peakRssMb, heapUsedMb, stop, pid: child.pid! };
}

/** One reading of the server's heap, `minutes` into the flood. */
export interface HeapSample {
  readonly minutes: number;
  readonly mb: number;
}

/**
 * The server's heap over the flood: its readings every HEAP_SAMPLE_MS, and their least-squares
 * slope (MB a minute) over the readings after the first fifth of the run (the warm-up: caches
 * filling, code compiled). V8 lets garbage build up between collections, so single readings swing;
 * a heap that keeps what it served shows as a slope that does not go away as the run grows.
 */
export interface HeapTrend {
  readonly samples: readonly HeapSample[];
  readonly mbPerMinute: number | null;
}

const HEAP_SAMPLE_MS = 5000;

/** Reads the heap every HEAP_SAMPLE_MS until `running()` is false. */
async function followHeap(read: () => Promise<number | null>, running: () => boolean): Promise<HeapTrend> {
  const started = performance.now();
  const samples: HeapSample[] = [];
  while (running()) {
    try {
      const mb = await read();
      if (mb !== null) samples.push({ minutes: (performance.now() - started) / 60_000, mb: round(mb) });
    } catch {
      // a reading missed under load: the next one counts
    }
    await new Promise((resolve) => setTimeout(resolve, HEAP_SAMPLE_MS));
  }
  const settled = samples.slice(Math.floor(samples.length / 5));
  return { samples, mbPerMinute: settled.length < 3 ? null : round(slope(settled), 2) };
}

/** The least-squares slope of mb against minutes. */
function slope(samples: readonly HeapSample[]): number {
  const n = samples.length;
  const mx = samples.reduce((sum, s) => sum + s.minutes, 0) / n;
  const my = samples.reduce((sum, s) => sum + s.mb, 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.minutes - mx) * (s.mb - my);
    den += (s.minutes - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** What the attackers' process reports when the flood ends. */
interface AttackFigures {
  readonly attempts: number;
  readonly byStatus: Record<string, number>;
  /** Attempts answered 401 or 200: each cost a password check. */
  readonly checked: number;
  readonly latencyMs: Percentiles;
  readonly transportErrors: number;
  /** CPU time the attackers' process spent (user + system), seconds. */
  readonly cpuSeconds: number;
}

/**
 * The attackers, in a process of their own at FLOOD_ATTACKER_NICE: the owners' timings are then
 * the server's, not the attackers' event loop's, and the attackers' CPU (a remote machine's in a
 * real flood) is not taken first from the server they attack.
 */
function startAttackers(settings: FloodSettings, port: number): Promise<AttackFigures> {
  const args = ['attack', String(port), String(settings.concurrency), String(settings.durationMs)];
  return runAttackers<AttackFigures>(settings, fileURLToPath(import.meta.url), args);
}

/** Runs an attackers' script in a process of its own at FLOOD_ATTACKER_NICE; resolves to the JSON it prints. */
export function runAttackers<T>(
  settings: FloodSettings,
  script: string,
  args: readonly string[],
): Promise<T> {
  const command = [process.execPath, script, ...args];
  const [file, ...rest] =
    settings.attackerNice > 0 ? ['nice', '-n', String(settings.attackerNice), ...command] : command;
  const child = spawn(file as string, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`the attackers exited with ${code}`)),
    ),
  );
}

/** The attackers' process: `concurrency` attempts in flight for `durationMs`, each from a new address for a new account. */
async function attack(port: number, concurrency: number, durationMs: number): Promise<AttackFigures> {
  const latencies: number[] = [];
  const byStatus: Record<string, number> = {};
  let checked = 0;
  let transportErrors = 0;
  let next = 0;
  const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  const end = performance.now() + durationMs;
  const attacker = async () => {
    // One pre-session CSRF token per attacker connection, reused: fetching it costs nothing.
    const browser = new Browser(port);
    await browser.csrf({ 'x-forwarded-for': address(next++) });
    while (performance.now() < end) {
      const n = next++;
      const t0 = performance.now();
      try {
        const answer = await browser.login(`user${n}@flood.example`, `guess-${n}`, {
          'x-forwarded-for': address(n),
        });
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
  agent.destroy();
  return {
    attempts: latencies.length,
    byStatus,
    checked,
    latencyMs: percentiles(latencies),
    transportErrors,
    cpuSeconds: cpuSeconds(process.cpuUsage()),
  };
}

export async function runFlood(settings: FloodSettings): Promise<FloodResults> {
  const loadBefore = loadavg()[0]!;
  const threads = Number(settings.serverEnv.LOGIN_HASH_CONCURRENCY ?? availableParallelism());
  log(`measuring the machine's password checks alone (${threads} at once, 5 s)`);
  const aloneBefore = await checksAlone(settings, threads);
  log(`${aloneBefore.toFixed(1)} checks/s alone`);

  const port = await freePort();
  const server = await startServer(settings, port);
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
    for (const companion of FLOOD_COMPANIONS) await companion.setUp(port);

    const owners = {
      knownDevice: { latencies: [] as number[], byStatus: {} as Record<string, number> },
      unknownDevice: { latencies: [] as number[], byStatus: {} as Record<string, number> },
      signedIn: { latencies: [] as number[], byStatus: {} as Record<string, number> },
    };
    const started = performance.now();
    const ownCpu = process.cpuUsage();
    const end = started + settings.durationMs;
    const running = () => performance.now() < end;
    const attackers = startAttackers(settings, port);
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
    const companions = Promise.all(FLOOD_COMPANIONS.map((companion) => companion.during(port, running)));
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
      owner(owners.signedIn, () => bob.get('/api/auth/me'), 200),
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
      companions: Object.fromEntries((await companions).map((f, i) => [FLOOD_COMPANIONS[i]!.name, f])),
      transportErrors,
      peakRssMb: round(peakRssMb),
      heap: await heap,
    };
  } finally {
    await server.stop();
    agent.destroy();
  }
}

const round = (v: number, places = 1) => Math.round(v * 10 ** places) / 10 ** places;

/** The targets of contract §11's bench, each with what was measured and whether it held. */
export function floodVerdicts(r: FloodResults): { target: string; measured: string; held: boolean }[] {
  const statuses = (f: OwnerFigures) => Object.keys(f.byStatus);
  const counts = (f: OwnerFigures) =>
    Object.entries(f.byStatus)
      .map(([key, n]) => `${key} × ${n}`)
      .join(', ') || 'no answer';
  const fiveHundreds = [r.attack, r.owners.knownDevice, r.owners.unknownDevice, r.owners.signedIn].flatMap(
    (f) => Object.keys(f.byStatus).filter((key) => key.startsWith('5') && !key.endsWith('LOGIN_BUSY')),
  );
  const { knownDevice, unknownDevice, signedIn } = r.owners;
  return [
    {
      target: 'known-device owner: every attempt 200, p95 ≤ 300 ms',
      measured: `${counts(knownDevice)}; p95 ${knownDevice.latencyMs.p95} ms`,
      held:
        knownDevice.requests > 0 &&
        statuses(knownDevice).every((s) => s === '200') &&
        knownDevice.latencyMs.p95 <= 300,
    },
    {
      target: 'unknown-device owner: every answer within 2 s, 200 or 503 LOGIN_BUSY with Retry-After',
      measured: `${counts(unknownDevice)}; max ${unknownDevice.latencyMs.max} ms`,
      held:
        unknownDevice.requests > 0 &&
        statuses(unknownDevice).every((s) => s === '200' || s === '503 LOGIN_BUSY') &&
        unknownDevice.latencyMs.max <= 2000,
    },
    {
      target: 'signed-in traffic: p99 ≤ 50 ms, no errors',
      measured: `${counts(signedIn)}; p99 ${signedIn.latencyMs.p99} ms`,
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

/** The heap's readings in a line: first, least and most, last, and the trend. */
export function heapSummary({ samples, mbPerMinute }: HeapTrend): string {
  if (samples.length === 0) return 'server heap: no readings';
  const mbs = samples.map((s) => s.mb);
  const trend = mbPerMinute === null ? 'too few readings for a trend' : `trend ${mbPerMinute} MB/min`;
  return `server heap: ${samples.length} readings over ${samples.at(-1)!.minutes.toFixed(1)} min, first ${mbs[0]} MB, least ${Math.min(...mbs)} MB, most ${Math.max(...mbs)} MB, last ${mbs.at(-1)} MB; ${trend} (after the first fifth)`;
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
    scenarios: (env.FLOOD_SCENARIOS ?? ['outside', ...FLOOD_SCENARIO_LIST.map((s) => s.name)].join(','))
      .split(',')
      .filter(Boolean),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'attack') {
  const [port, concurrency, durationMs] = process.argv.slice(3).map(Number) as [number, number, number];
  console.log(JSON.stringify(await attack(port, concurrency, durationMs)));
} else if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'alone') {
  console.log(await machineChecksPerSecond(Number(process.argv[3])));
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const settings = floodSettings();
  const results = settings.scenarios.includes('outside') ? await runFlood(settings) : null;
  if (results) console.log(floodSummary(results));
  const scenarios = await runFloodScenarios(settings);
  for (const scenario of scenarios) console.log(`\n${scenarioSummary(scenario)}`);
  if (process.env.FLOOD_JSON)
    writeFileSync(process.env.FLOOD_JSON, `${JSON.stringify({ ...results, scenarios }, null, 2)}\n`);
}
