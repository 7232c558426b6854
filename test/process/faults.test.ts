// The fleet riding through faults, over real processes: nginx, two instances, their own PostgreSQL and Redis, clients at work.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { send, type Target } from '../fuzz/transport.ts';
import { skipUnlessNginx, startNginx } from '../helpers/nginx.ts';
import { PostgresServer, skipUnlessPostgresBinaries } from '../helpers/postgres-server.ts';
import { freePort, RedisServer, skipUnlessRedisBinaries } from '../helpers/redis-server.ts';

const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url));

/** Clients at work through nginx, each on its own tasks; a pause between requests keeps the machine usable. */
const CLIENTS = 12;
const TASKS_PER_CLIENT = 16;
const THINK_MS = 60;
const EMPLOYEES = ['alice@example.com', 'bob@example.com', 'carol@example.com'];
/** How long PostgreSQL stays down, and how long after a fault every client must have a 200 again. */
const POSTGRES_DOWN_MS = 6_000;
const RECOVERY_MS = 5_000;
/** Requests in flight when an instance is SIGKILLed, or sent this soon after, may fail: nothing answers them. */
const KILL_INSTANT_MS = 500;

const skip = skipUnlessNginx() || skipUnlessPostgresBinaries() || skipUnlessRedisBinaries();

/**
 * The status of one GET on a connection of its own, closed after it (fetch would keep it alive,
 * and an instance's drain would wait for it); 0 when nothing answers.
 */
function probe(port: number, url: string): Promise<number> {
  return new Promise((resolve) => {
    http
      .get({ host: '127.0.0.1', port, path: url, agent: false }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      })
      .on('error', () => resolve(0));
  });
}

/** One instance of the service as a process, started again on the same port after it stops. */
class Instance {
  readonly port: number;
  private readonly env: Record<string, string>;
  private child: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);
  /** Everything every run of this instance printed. */
  output = '';

  constructor(port: number, env: Record<string, string>) {
    this.port = port;
    this.env = env;
  }

  start(): void {
    const child = spawn(process.execPath, [SERVER], {
      env: { ...process.env, ...this.env, PORT: String(this.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (this.output += chunk));
    child.stderr!.on('data', (chunk) => (this.output += chunk));
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Resolves when /readyz answers 200 on the instance's own port. */
  async ready(ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    const child = this.child;
    while (Date.now() < deadline) {
      if (!child || child.exitCode !== null || child.signalCode !== null)
        throw new Error(`instance on ${this.port} exited:\n${this.output.slice(-4000)}`);
      const status = await probe(this.port, '/readyz');
      if (status === 200) return;
      await sleep(100); // another process starting: real time
    }
    throw new Error(`instance on ${this.port} not ready within ${ms} ms:\n${this.output.slice(-4000)}`);
  }

  /** Sends `signal` and waits for the exit; returns the exit code (null after a kill). */
  async stop(signal: NodeJS.Signals): Promise<number | null> {
    this.child?.kill(signal);
    const code = await this.exited;
    this.child = null;
    return code;
  }
}

interface Exchange {
  readonly client: number;
  readonly kind: 'read' | 'bulk';
  readonly phase: string;
  readonly start: number;
  readonly end: number;
  /** 0 when no answer came. */
  readonly status: number;
  readonly code: string | null;
  readonly retryAfter: string | null;
  readonly error: string | null;
}

interface Attempt {
  readonly assigneeId: number;
  readonly acknowledged: boolean;
}

/** A signed-in browser of the portal talking to nginx: cookies, CSRF token, one keep-alive socket. */
class Client {
  readonly id: number;
  readonly tasks: readonly number[];
  private readonly target: Target;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly cookies = new Map<string, string>();
  private csrfToken = '';

  constructor(id: number, target: Target) {
    this.id = id;
    this.target = target;
    this.tasks = Array.from({ length: TASKS_PER_CLIENT }, (_, i) => id * TASKS_PER_CLIENT + i + 1);
  }

  async request(method: string, url: string, body?: unknown) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.cookies.size > 0)
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (method !== 'GET') headers['x-csrf-token'] = this.csrfToken;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const outcome = await send(this.agent, this.target, {
      method,
      path: url,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (outcome.kind === 'error')
      return { status: 0, headers: {} as http.IncomingHttpHeaders, json: null, error: outcome.code };
    const { answer } = outcome;
    const setCookie = answer.headers['set-cookie'] ?? [];
    for (const cookie of setCookie) {
      const [pair] = cookie.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(answer.body) as Record<string, unknown>;
    } catch {
      // nginx's own pages are HTML: the missing code tells.
    }
    return { status: answer.status, headers: answer.headers, json, error: null };
  }

  async signIn(email: string): Promise<void> {
    const csrf = await this.request('GET', '/api/csrf-token');
    assert.equal(csrf.status, 200, JSON.stringify(csrf));
    this.csrfToken = csrf.json!.csrfToken as string;
    const login = await this.request('POST', '/api/auth/login', { email, password: 'demo-password' });
    assert.equal(login.status, 200, JSON.stringify(login));
    this.csrfToken = login.json!.csrfToken as string;
  }

  close(): void {
    this.agent.destroy();
  }
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

/** Counts by status and code, e.g. `{"200": 812, "503 DATABASE_UNAVAILABLE": 40}`. */
function tally(exchanges: readonly Exchange[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of exchanges) {
    const key =
      e.status === 0 ? `no answer (${e.error})` : e.code ? `${e.status} ${e.code}` : String(e.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

describe('the fleet through faults', { skip }, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it('answers 503 with a code while PostgreSQL is away, drops nothing in a rolling restart, loses no acknowledged write', async (t) => {
    const started = Date.now();
    const [postgres, redis] = await Promise.all([PostgresServer.start(), RedisServer.start()]);
    cleanups.push(
      () => postgres.destroy(),
      () => redis.stop(),
    );

    const env = {
      NODE_ENV: 'production',
      SEED_DEMO: 'true', // the clients sign in as the demo employees (production seeds none unless asked)
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: postgres.url,
      REDIS_URL: redis.url,
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      TRUST_PROXY: '127.0.0.1',
      PASSWORD_HASH_COST: '64',
      RATE_LIMIT_BULK: '1000000/15m',
      RATE_LIMIT_AUTHENTICATED: '1000000/15m',
      RATE_LIMIT_UNAUTHENTICATED: '1000000/15m',
      RATE_LIMIT_LOGIN_IP: '1000000/15m',
      RATE_LIMIT_LOGIN_ACCOUNT: '1000000/15m',
      METRICS_PORT: '0',
    };
    const instances = [new Instance(await freePort(), env), new Instance(await freePort(), env)];
    for (const instance of instances) instance.start();
    cleanups.push(async () => Promise.all(instances.map((instance) => instance.stop('SIGKILL'))));
    await Promise.all(instances.map((instance) => instance.ready()));

    const port = await freePort();
    // deploy/nginx.conf itself: the rolling restart below is what its upstream settings are for.
    const nginx = await startNginx({
      listen: `127.0.0.1:${port}`,
      upstreams: instances.map((instance) => `127.0.0.1:${instance.port}`),
    });
    cleanups.push(() => nginx.stop());
    const target: Target = { host: '127.0.0.1', port };
    for (let i = 0; ; i++) {
      const status = await probe(port, '/healthz');
      if (status === 200) break;
      if (i > 100) throw new Error('nginx did not start');
      await sleep(100);
    }

    const clients = Array.from({ length: CLIENTS }, (_, i) => new Client(i, target));
    cleanups.push(async () => {
      for (const client of clients) client.close();
    });
    await Promise.all(clients.map((client) => client.signIn(EMPLOYEES[client.id % EMPLOYEES.length]!)));
    const employees = await clients[0]!.request('GET', '/api/employee/employees');
    const employeeIds = (employees.json!.employees as { id: number; role: string }[]).map((user) => user.id);

    let phase = 'steady';
    let working = true;
    const exchanges: Exchange[] = [];
    const attempts = new Map<number, Attempt[]>();
    const work = async (client: Client) => {
      while (working) {
        const bulk = Math.random() < 0.35;
        const start = Date.now();
        const phaseAtStart = phase;
        let answer: Awaited<ReturnType<Client['request']>>;
        if (bulk) {
          const taskIds = [...new Set([pick(client.tasks), pick(client.tasks), pick(client.tasks)])];
          const assigneeId = pick(employeeIds);
          answer = await client.request('PATCH', '/api/employee/tasks/bulk', { taskIds, assigneeId });
          const acknowledged =
            answer.status === 200 && (answer.json?.succeeded as number | undefined) === taskIds.length;
          for (const taskId of taskIds) {
            const list = attempts.get(taskId) ?? [];
            list.push({ assigneeId, acknowledged });
            attempts.set(taskId, list);
          }
        } else {
          answer =
            Math.random() < 0.5
              ? await client.request('GET', '/api/employee/tasks?limit=20')
              : await client.request('GET', `/api/employee/tasks/${pick(client.tasks)}`);
        }
        const retryAfter = answer.headers['retry-after'];
        exchanges.push({
          client: client.id,
          kind: bulk ? 'bulk' : 'read',
          phase: phaseAtStart,
          start,
          end: Date.now(),
          status: answer.status,
          code: typeof answer.json?.code === 'string' ? answer.json.code : null,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          error: answer.error,
        });
        // A client that is told when to come back waits that long, as the typed client does.
        const wait = answer.status === 503 && retryAfter ? Number(retryAfter) * 1000 : 0;
        await sleep(wait || THINK_MS * (0.5 + Math.random()));
      }
    };
    const loops = clients.map(work);

    /** When each fault was over (the service whole again), for the recovery check. */
    const recovered: { fault: string; at: number }[] = [];
    const timeline: string[] = [];
    const mark = (text: string) => timeline.push(`${((Date.now() - started) / 1000).toFixed(1)}s ${text}`);
    let killedAt = 0;
    let postgresStoppedAt = 0;
    try {
      await sleep(3_000);

      phase = 'postgres';
      mark('PostgreSQL stops');
      postgresStoppedAt = Date.now();
      await postgres.stop('fast');
      await sleep(POSTGRES_DOWN_MS);
      await postgres.restart();
      mark('PostgreSQL is back');
      recovered.push({ fault: 'postgres', at: Date.now() });
      await sleep(RECOVERY_MS + 1_000);

      phase = 'redis';
      mark('Redis killed');
      await redis.kill();
      await sleep(2_000);
      await redis.restart();
      mark('Redis is back');
      recovered.push({ fault: 'redis', at: Date.now() });
      await sleep(3_000);

      phase = 'rolling';
      for (const [i, instance] of instances.entries()) {
        mark(`instance ${i} SIGTERM`);
        const drainStart = Date.now();
        const code = await instance.stop('SIGTERM');
        mark(`instance ${i} exited ${code} after ${Date.now() - drainStart} ms`);
        assert.equal(code, 0, `instance ${i} exits 0 after its drain:\n${instance.output.slice(-3000)}`);
        instance.start();
        await instance.ready();
        mark(`instance ${i} ready again`);
        recovered.push({ fault: `rolling ${i}`, at: Date.now() });
      }
      await sleep(3_000);

      phase = 'sigkill';
      await sleep(KILL_INSTANT_MS); // the requests the kill cuts are counted with it
      mark('instance 1 SIGKILL');
      killedAt = Date.now();
      await instances[1]!.stop('SIGKILL');
      recovered.push({ fault: 'sigkill', at: killedAt });
      instances[1]!.start();
      await instances[1]!.ready();
      mark('instance 1 ready again');
      await sleep(3_000);
    } finally {
      working = false;
      await Promise.all(loops);
    }

    const phases = ['steady', 'postgres', 'redis', 'rolling', 'sigkill'];
    for (const name of phases) {
      const of = exchanges.filter((e) => e.phase === name);
      t.diagnostic(
        `${name}: ${JSON.stringify(tally(of))} (bulk ${JSON.stringify(tally(of.filter((e) => e.kind === 'bulk')))})`,
      );
    }
    t.diagnostic(`timeline: ${timeline.join('; ')}`);
    const seconds = (ms: number) => ((ms - started) / 1000).toFixed(2);
    const outageLines: Record<string, number>[] = [];
    for (const [i, instance] of instances.entries()) {
      const lines = instance.output
        .split('\n')
        .filter((line) => /database/i.test(line) && !/"reqId"/.test(line));
      // The PostgreSQL restart's own lines (a process starting on a loaded machine may meet a
      // short outage of its own, logged as one too).
      const postgresBackAt = recovered.find(({ fault }) => fault === 'postgres')?.at ?? 0;
      const ofTheRestart = lines.filter((line) => {
        const time = /"time":(\d+)/.exec(line)?.[1];
        return (
          time !== undefined &&
          Number(time) >= postgresStoppedAt &&
          Number(time) <= postgresBackAt + RECOVERY_MS
        );
      });
      outageLines.push({
        started: ofTheRestart.filter((line) => line.includes('database unavailable')).length,
        ended: ofTheRestart.filter((line) => line.includes('database available again')).length,
      });
      const shown = lines.map((line) => {
        try {
          const { time, msg } = JSON.parse(line) as { time: number; msg: string };
          return `${seconds(time)}s ${msg}`;
        } catch {
          return line.slice(0, 200);
        }
      });
      t.diagnostic(`instance ${i} database log lines: ${lines.length}\n${shown.join('\n')}`);
    }

    const nginxErrors = await nginx.errors();
    t.diagnostic(`nginx error.log: ${nginxErrors.length} errors\n${nginxErrors.slice(0, 12).join('\n')}`);

    const brief = (list: readonly Exchange[]) =>
      list.map(
        (e) =>
          `${seconds(e.start)}–${seconds(e.end)}s client ${e.client} ${e.kind} ${e.status} ${e.code ?? ''}${e.error ?? ''}`,
      );
    const atTheKill = (e: Exchange) =>
      killedAt > 0 && e.start <= killedAt + KILL_INSTANT_MS && e.end >= killedAt;
    // Every promise is checked and every broken one reported, the first few cases of each.
    const broken: Record<string, string[]> = {};
    const expectNone = (promise: string, list: readonly Exchange[]) => {
      if (list.length > 0) broken[promise] = [`${list.length} requests`, ...brief(list.slice(0, 8))];
    };
    expectNone(
      'no 500 anywhere',
      exchanges.filter((e) => e.status === 500),
    );
    expectNone(
      'outside the SIGKILL, every request is answered, every non-2xx with a code',
      exchanges.filter((e) => !atTheKill(e) && (e.status === 0 || (e.status >= 300 && e.code === null))),
    );
    expectNone(
      'every 503 says when to come back (Retry-After 1–5)',
      exchanges.filter((e) => e.status === 503 && !(Number(e.retryAfter) >= 1 && Number(e.retryAfter) <= 5)),
    );
    expectNone(
      'nothing fails during the rolling restart, bulk PATCHes included',
      exchanges.filter((e) => e.phase === 'rolling' && !atTheKill(e) && (e.status < 200 || e.status > 299)),
    );
    if (outageLines.some(({ started, ended }) => started !== 1 || ended !== 1))
      broken['each instance logs the PostgreSQL restart once when it starts and once when it ends'] =
        outageLines.map((counts) => JSON.stringify(counts));
    if (!exchanges.some((e) => e.phase === 'postgres' && e.code === 'DATABASE_UNAVAILABLE'))
      broken['the outage is answered DATABASE_UNAVAILABLE'] = ['not once'];

    const late: string[] = [];
    for (const { fault, at } of recovered) {
      for (const client of clients) {
        const firstOk = exchanges.find((e) => e.client === client.id && e.start >= at && e.status === 200);
        if (!firstOk || firstOk.end - at > RECOVERY_MS)
          late.push(`client ${client.id} after ${fault}: ${firstOk ? `${firstOk.end - at} ms` : 'never'}`);
      }
    }
    if (late.length > 0) broken[`a 200 within ${RECOVERY_MS} ms after each fault`] = late;

    // Every acknowledged reassignment is in the database: each task holds its last acknowledged
    // assignee, or that of a later attempt whose outcome the client never learnt (or was refused).
    const database = new pg.Client({ connectionString: postgres.url });
    await database.connect();
    const { rows } = await database.query<{ id: number; assignee_id: number | null }>(
      'SELECT id, assignee_id FROM tasks WHERE id = ANY($1)',
      [[...attempts.keys()]],
    );
    await database.end();
    const lost: string[] = [];
    for (const row of rows) {
      const list = attempts.get(row.id)!;
      const last = list.findLastIndex((attempt) => attempt.acknowledged);
      if (last < 0) continue;
      const possible = new Set(list.slice(last).map((attempt) => attempt.assigneeId));
      if (!possible.has(row.assignee_id!))
        lost.push(`task ${row.id}: ${row.assignee_id}, acknowledged ${list[last]!.assigneeId}`);
    }
    if (lost.length > 0) broken['every acknowledged reassignment is in the database'] = lost;
    const acknowledged = [...attempts.values()].flat().filter((attempt) => attempt.acknowledged).length;
    t.diagnostic(
      `${exchanges.length} requests, ${acknowledged} acknowledged task reassignments checked, ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    assert.deepEqual(broken, {});
  });
});
