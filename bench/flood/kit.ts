// The flood bench's kit: a browser over the typed client, how answers are counted, a scenario's server.
//
// A leaf: the scenarios (listed in index.ts) build on it; it imports none of them.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiClient,
  ApiError,
  MemoryCookieJar,
  parseRetryAfter,
  type WebAuthnJSON,
  type WorkAsked,
  type WorkSolver,
} from '../../src/client/index.ts';
import { DEMO_ACCOUNTS, DEMO_PASSWORD } from '../../src/db/seed.ts';
import { freePort } from '../lib/ports.ts';

/** The checkout this bench belongs to (FLOOD_SERVER_DIR's default). */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The demo accounts the scenarios sign in as, and their password (the service's seed). */
export const PASSWORD = DEMO_PASSWORD;
const email = (name: string) => DEMO_ACCOUNTS.find((account) => account.email.startsWith(`${name}@`))!.email;
export const ALICE = email('alice');
export const BOB = email('bob');
export const CAROL = email('carol');

export const log = (message: string) => console.error(`[flood] ${message}`);

export interface FloodSettings {
  readonly concurrency: number;
  /** The attackers' process runs at this niceness (0: the server's own priority). */
  readonly attackerNice: number;
  readonly durationMs: number;
  readonly serverDir: string;
  readonly serverEnv: Readonly<Record<string, string>>;
  /** What to run: `outside` (the outside flood) and the scenarios of index.ts by name. */
  readonly scenarios: readonly string[];
}

/** A scenario run after the outside flood, on a server of its own, in a file of its own (listed in index.ts). */
export interface FloodScenario {
  readonly name: string;
  run(settings: FloodSettings): Promise<ScenarioResults>;
}

export interface Verdict {
  readonly target: string;
  readonly measured: string;
  readonly held: boolean;
}

export interface ScenarioResults {
  readonly name: string;
  /** A heading for the Markdown report. */
  readonly title: string;
  /** Who asked what and what they got, as a Markdown table. */
  readonly table: string;
  /** The same, a line each, for the console. */
  readonly summary: readonly string[];
  readonly verdicts: readonly Verdict[];
  /** The figures, for benchmarks-run.json. */
  readonly data: unknown;
}

/**
 * A companion runs beside the owners during the outside flood (a scenario runs after it, on a
 * server of its own), kept in a file of its own and listed in index.ts; its figures are reported
 * under its name.
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

/** How a request was answered, as the flood counts it. */
export interface Answer {
  readonly status: number;
  /** The error's `code`, null for a success or an answer without one. */
  readonly code: string | null;
  /** The seconds its Retry-After header asked for, null without one. */
  readonly retryAfter: number | null;
  /** The challenge a LOGIN_BUSY carries (proved work), or null. */
  readonly work: WorkAsked | null;
}

/** Thrown by the solver of a browser that proves no work: the sign-in ends at the LOGIN_BUSY. */
class NoWork extends Error {
  readonly asked: WorkAsked;
  constructor(asked: WorkAsked) {
    super('no work proved');
    this.asked = asked;
  }
}
const proveNoWork: WorkSolver = async (asked) => {
  throw new NoWork(asked);
};

/**
 * A browser: the product's typed client (src/client) with a cookie jar of its own, never retrying,
 * from the address `forwardedFor` names (X-Forwarded-For, for a server that trusts the loopback
 * proxy). Each call answers how the server answered; only a transport error throws.
 */
export class Browser {
  readonly client: ApiClient;
  /** Sent as X-Forwarded-For on every request while set. */
  forwardedFor: string | null = null;
  private last: { status: number; retryAfter: number | null } = { status: 0, retryAfter: null };

  constructor(port: number) {
    this.client = new ApiClient({
      baseUrl: `http://127.0.0.1:${port}`,
      cookieJar: new MemoryCookieJar(),
      retry: false,
      fetch: async (input, init) => {
        const headers = { ...(init?.headers as Record<string, string>) };
        if (this.forwardedFor) headers['x-forwarded-for'] = this.forwardedFor;
        const response = await fetch(input, { ...init, headers });
        this.last = {
          status: response.status,
          retryAfter: parseRetryAfter(response.headers.get('retry-after'), Date.now()),
        };
        return response;
      },
    });
  }

  /** The seconds the last response's Retry-After asked for, null without one. */
  get retryAfter(): number | null {
    return this.last.retryAfter;
  }

  /** Fetches a CSRF token (a new browser's first page load). */
  csrf(): Promise<Answer> {
    return this.answer(() => this.client.csrf());
  }

  /**
   * Signs in. Without `solve` a LOGIN_BUSY that asks for work is the answer; with it, the client
   * solves and sends again as the portal does (the asked effort, one bit more after a further
   * LOGIN_BUSY, up to LOGIN_WORK_ROUNDS times).
   */
  login(email: string, password: string, solve: WorkSolver = proveNoWork): Promise<Answer> {
    return this.answer(() => this.client.login(email, password, { solveWork: solve }));
  }

  me(): Promise<Answer> {
    return this.answer(() => this.client.me());
  }

  /** A passkey's creation options, then the authenticator's answer stored as `name`. */
  async addPasskey(name: string, create: (options: WebAuthnJSON) => WebAuthnJSON): Promise<Answer> {
    let options: WebAuthnJSON = {};
    const asked = await this.answer(async () => {
      options = await this.client.passkeyRegistrationOptions();
    });
    if (asked.status !== 200) return asked;
    return this.answer(() => this.client.addPasskey(name, create(options)));
  }

  /** Passkey sign-in options (a challenge for this browser). */
  async passkeyOptions(): Promise<{ answer: Answer; options: WebAuthnJSON }> {
    let options: WebAuthnJSON = {};
    const answer = await this.answer(async () => {
      options = await this.client.passkeySignInOptions();
    });
    return { answer, options };
  }

  passkeySignIn(response: WebAuthnJSON): Promise<Answer> {
    return this.answer(() => this.client.passkeySignIn(response));
  }

  private async answer(call: () => Promise<unknown>): Promise<Answer> {
    try {
      await call();
      return { status: this.last.status, code: null, retryAfter: this.last.retryAfter, work: null };
    } catch (error) {
      if (error instanceof NoWork)
        return { status: 503, code: 'LOGIN_BUSY', retryAfter: this.last.retryAfter, work: error.asked };
      if (!(error instanceof ApiError) || error.status === 0) throw error; // a transport error
      const work = error.body?.work as WorkAsked | undefined;
      return {
        status: error.status,
        code: error.code === 'UNEXPECTED_RESPONSE' ? null : error.code,
        retryAfter: this.last.retryAfter,
        work: work && typeof work.challenge === 'string' ? work : null,
      };
    }
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

/** Answers by kind, `200 × 12, 503 LOGIN_BUSY × 3`, or `no answer`. */
export const counts = (byStatus: Record<string, number>): string =>
  Object.entries(byStatus)
    .map(([key, n]) => `${key} × ${n}`)
    .join(', ') || 'no answer';

/**
 * An answer as it is counted: its status, its code when it is an error, and a shed attempt
 * without the Retry-After the rules promise (docs/rules.md#the-login-gate) counted apart, so the
 * targets see it.
 */
export function outcome(answer: Answer): string {
  if (answer.status < 400) return String(answer.status);
  const label = answer.code ? `${answer.status} ${answer.code}` : String(answer.status);
  return answer.code === 'LOGIN_BUSY' && answer.retryAfter === null ? `${label} without Retry-After` : label;
}

/** User + system seconds of a `process.cpuUsage()` reading. */
export const cpuSeconds = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1e6;

export const round = (v: number, places = 1) => Math.round(v * 10 ** places) / 10 ** places;

/** The server's environment as `npm start` sets it (its allocator setting changes what a check costs). */
export const START_ENV = {
  MALLOC_ARENA_MAX: '1',
  NODE_COMPILE_CACHE: 'node_modules/.cache/node-compile',
};

/** A started server: its pid, its peak RSS so far, its heap now, and how to stop it. */
export interface FloodServer {
  readonly pid: number;
  readonly port: number;
  peakRssMb(): number;
  /** The server's V8 heap in use (MB), from its /metrics; null when it does not say. */
  heapUsedMb(): Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * Starts the server of `settings.serverDir` as `npm start` does, on a free port and a fresh
 * embedded database, trusting the loopback proxy; resolves once it answers.
 */
export async function startServer(settings: FloodSettings): Promise<FloodServer> {
  const port = await freePort();
  const metricsPort = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'flood-data-'));
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
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200) break;
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
  const heapUsedMb = async (): Promise<number | null> => {
    const listener = Number(settings.serverEnv.METRICS_PORT ?? metricsPort);
    if (listener === 0) return null;
    const text = await (await fetch(`http://127.0.0.1:${listener}/metrics`)).text();
    const bytes = /^nodejs_heap_size_used_bytes (\d+)/m.exec(text)?.[1];
    return bytes === undefined ? null : Number(bytes) / 1048576;
  };
  return { pid: child.pid!, port, peakRssMb, heapUsedMb, stop };
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
export async function followHeap(
  read: () => Promise<number | null>,
  running: () => boolean,
): Promise<HeapTrend> {
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

/** The heap's readings in a line: first, least and most, last, and the trend. */
export function heapSummary({ samples, mbPerMinute }: HeapTrend): string {
  if (samples.length === 0) return 'server heap: no readings';
  const mbs = samples.map((s) => s.mb);
  const trend = mbPerMinute === null ? 'too few readings for a trend' : `trend ${mbPerMinute} MB/min`;
  return `server heap: ${samples.length} readings over ${samples.at(-1)!.minutes.toFixed(1)} min, first ${mbs[0]} MB, least ${Math.min(...mbs)} MB, most ${Math.max(...mbs)} MB, last ${mbs.at(-1)} MB; ${trend} (after the first fifth)`;
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

/** A new address for attempt `n` (10.0.0.0/8), sent as X-Forwarded-For. */
export const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
