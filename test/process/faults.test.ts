// The fleet riding through faults (docs/rules.md#faults): nginx, two instances, PostgreSQL, Redis.
// whose bulk reassignments carry an Idempotency-Key and are sent again with it when their fate is unknown.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
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
/**
 * A reassignment whose fate is unknown (no answer, 502, 503, 504, or its key in flight) is sent
 * again with its key at most this many times, as the typed client does; then it is given up.
 */
const KEYED_RETRIES = 2;

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
  /** A bulk request's Idempotency-Key (its retries send the same). */
  readonly key: string | null;
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

/** One reassignment under one key, with every try of it. */
interface Reassignment {
  readonly key: string;
  readonly client: number;
  readonly phase: string;
  readonly taskIds: readonly number[];
  /** Its last try was answered 200 (itself or the stored answer of an earlier try). */
  acknowledged: boolean;
  tries: number;
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

  async request(method: string, url: string, body?: unknown, extra: Record<string, string> = {}) {
    const headers: Record<string, string> = { accept: 'application/json', ...extra };
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
      // Only a Redis that is away moves budgets to an instance's memory, not a command slowed by a
      // loaded machine: the bulk budget's charges are counted in Redis, per phase.
      REDIS_COMMAND_TIMEOUT_MS: '1000',
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

    // Every change of a task and every answer stored under a key, with the transaction that made it:
    // a reassignment applied twice would show as a key with two answers, or a change with none.
    const auditor = new pg.Client({ connectionString: postgres.url });
    await auditor.connect();
    await auditor.query(`
      CREATE TABLE task_changes (task_id integer, tx bigint);
      CREATE FUNCTION note_task_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO task_changes VALUES (NEW.id, txid_current()); RETURN NEW; END $$;
      CREATE TRIGGER note_task_change AFTER UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION note_task_change();
      CREATE TABLE stored_answers (user_id integer, key text, tx bigint);
      CREATE FUNCTION note_stored_answer() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO stored_answers VALUES (NEW.user_id, NEW.key, txid_current()); RETURN NEW; END $$;
      CREATE TRIGGER note_stored_answer AFTER UPDATE ON idempotency_keys FOR EACH ROW
        WHEN (OLD.response IS NULL AND NEW.response IS NOT NULL) EXECUTE FUNCTION note_stored_answer();`);
    await auditor.end();

    const clients = Array.from({ length: CLIENTS }, (_, i) => new Client(i, target));
    cleanups.push(async () => {
      for (const client of clients) client.close();
    });
    await Promise.all(clients.map((client) => client.signIn(EMPLOYEES[client.id % EMPLOYEES.length]!)));
    const employees = await clients[0]!.request('GET', '/api/employee/employees');
    const employeeIds = (employees.json!.employees as { id: number; role: string }[]).map((user) => user.id);

    let phase = 'start';
    let working = true;
    const exchanges: Exchange[] = [];
    const attempts = new Map<number, Attempt[]>();
    const reassignments: Reassignment[] = [];
    // Phases are measured between pauses: every client waits at the gate, so no reassignment is
    // half-way when the budgets are read.
    let gate: { opened: Promise<void>; open: () => void } | null = null;
    let waitingAtGate = 0;
    /** Sends one request and records the exchange; returns the answer. */
    const exchange = async (
      client: Client,
      kind: Exchange['kind'],
      key: string | null,
      send: () => ReturnType<Client['request']>,
    ) => {
      const start = Date.now();
      const phaseAtStart = phase;
      const answer = await send();
      const retryAfter = answer.headers['retry-after'];
      exchanges.push({
        client: client.id,
        kind,
        key,
        phase: phaseAtStart,
        start,
        end: Date.now(),
        status: answer.status,
        code: typeof answer.json?.code === 'string' ? answer.json.code : null,
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
        error: answer.error,
      });
      return answer;
    };
    /** Whether a reassignment's fate is unknown after this answer, so it is sent again with its key. */
    const fateUnknown = (answer: Awaited<ReturnType<Client['request']>>) =>
      answer.status === 0 ||
      [502, 503, 504].includes(answer.status) ||
      answer.json?.code === 'IDEMPOTENCY_KEY_IN_FLIGHT';
    const work = async (client: Client) => {
      while (working) {
        if (gate) {
          waitingAtGate++;
          await gate.opened;
          waitingAtGate--;
          continue;
        }
        const bulk = Math.random() < 0.35;
        let answer: Awaited<ReturnType<Client['request']>>;
        if (bulk) {
          // A new key per reassignment, the same for each of its tries, as the portal and the typed client do.
          const taskIds = [...new Set([pick(client.tasks), pick(client.tasks), pick(client.tasks)])];
          const assigneeId = pick(employeeIds);
          const key = randomUUID();
          const reassignment: Reassignment = {
            key,
            client: client.id,
            phase,
            taskIds,
            acknowledged: false,
            tries: 0,
          };
          reassignments.push(reassignment);
          for (;;) {
            reassignment.tries++;
            answer = await exchange(client, 'bulk', key, () =>
              client.request(
                'PATCH',
                '/api/employee/tasks/bulk',
                { taskIds, assigneeId },
                { 'idempotency-key': key },
              ),
            );
            if (!fateUnknown(answer) || reassignment.tries > KEYED_RETRIES || !working) break;
            const retryAfter = Number(answer.headers['retry-after']);
            await sleep(retryAfter > 0 ? retryAfter * 1000 : THINK_MS);
          }
          reassignment.acknowledged =
            answer.status === 200 && (answer.json?.succeeded as number | undefined) === taskIds.length;
          for (const taskId of taskIds) {
            const list = attempts.get(taskId) ?? [];
            list.push({ assigneeId, acknowledged: reassignment.acknowledged });
            attempts.set(taskId, list);
          }
        } else {
          answer = await exchange(client, 'read', null, () =>
            Math.random() < 0.5
              ? client.request('GET', '/api/employee/tasks?limit=20')
              : client.request('GET', `/api/employee/tasks/${pick(client.tasks)}`),
          );
        }
        // A client that is told when to come back waits that long, as the typed client does.
        const retryAfter = answer.headers['retry-after'];
        const wait = answer.status === 503 && retryAfter ? Number(retryAfter) * 1000 : 0;
        await sleep(wait || THINK_MS * (0.5 + Math.random()));
      }
    };
    /** Stops every client at the gate (each ends what it is doing first); `resume` lets them go on. */
    const pause = async () => {
      let open = () => {};
      const opened = new Promise<void>((resolve) => (open = resolve));
      gate = { opened, open };
      while (waitingAtGate < clients.length) await sleep(10); // the clients' own requests: real time
    };
    const resume = () => {
      gate?.open();
      gate = null;
    };
    /** What each employee's bulk budget has left (GET /api/rate-limits spends nothing), by user id. */
    const bulkRemaining = async () => {
      const left = new Map<number, number>();
      for (const client of clients.slice(0, EMPLOYEES.length)) {
        const me = await client.request('GET', '/api/auth/me');
        const budgets = await client.request('GET', '/api/rate-limits');
        const controls = budgets.json!.controls as { control: string; remaining: number }[];
        left.set(
          (me.json!.user as { id: number }).id,
          controls.find((c) => c.control === 'task-bulk')!.remaining,
        );
      }
      return left;
    };
    const userOf = new Map<number, number>();
    for (const client of clients)
      userOf.set(client.id, ((await client.request('GET', '/api/auth/me')).json!.user as { id: number }).id);
    /** Budget units spent in a phase, per user, and the keys its clients sent in it. */
    const charges: {
      phase: string;
      spent: Map<number, number>;
      keys: Map<number, number>;
      sentAgain: Map<number, number>;
    }[] = [];
    const measured = async (name: string, run: () => Promise<void>) => {
      await pause();
      const before = await bulkRemaining();
      phase = name;
      resume();
      await run();
      await pause();
      const after = await bulkRemaining();
      const spent = new Map([...before].map(([user, left]) => [user, left - after.get(user)!]));
      const keys = new Map([...before.keys()].map((user) => [user, 0]));
      const sentAgain = new Map([...before.keys()].map((user) => [user, 0]));
      for (const r of reassignments.filter((r) => r.phase === name)) {
        const user = userOf.get(r.client)!;
        keys.set(user, keys.get(user)! + 1);
        if (r.tries > 1) sentAgain.set(user, sentAgain.get(user)! + 1);
      }
      charges.push({ phase: name, spent, keys, sentAgain });
      t.diagnostic(`${name}: before ${JSON.stringify([...before])} after ${JSON.stringify([...after])}`);
      phase = `after ${name}`;
      resume();
    };
    const loops = clients.map(work);

    /** When each fault was over (the service whole again), for the recovery check. */
    const recovered: { fault: string; at: number }[] = [];
    const timeline: string[] = [];
    const mark = (text: string) => timeline.push(`${((Date.now() - started) / 1000).toFixed(1)}s ${text}`);
    let killedAt = 0;
    let postgresStoppedAt = 0;
    try {
      await measured('steady', () => sleep(3_000));

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

      // The budgets are read before and after (the clients paused), so each phase's charges are exact.
      await measured('rolling', async () => {
        await sleep(1_000); // requests in flight when the first SIGTERM comes
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
      });

      await measured('sigkill', async () => {
        await sleep(KILL_INSTANT_MS); // the requests the kill cuts are counted with it
        mark('instance 1 SIGKILL');
        killedAt = Date.now();
        await instances[1]!.stop('SIGKILL');
        recovered.push({ fault: 'sigkill', at: killedAt });
        instances[1]!.start();
        await instances[1]!.ready();
        mark('instance 1 ready again');
        await sleep(3_000);
      });
    } finally {
      working = false;
      resume();
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

    // Exactly once: each change of a task was made by a keyed reassignment's transaction that stored
    // its answer, no key stored two answers (so none was applied twice), and every acknowledged key one.
    const audit = new pg.Client({ connectionString: postgres.url });
    await audit.connect();
    const answers = (await audit.query<{ key: string; tx: string }>('SELECT key, tx FROM stored_answers'))
      .rows;
    const unanswered = (
      await audit.query<{ task_id: number; tx: string }>(
        'SELECT task_id, tx FROM task_changes WHERE tx NOT IN (SELECT tx FROM stored_answers)',
      )
    ).rows;
    await audit.end();
    const answersOf = new Map<string, number>();
    for (const { key } of answers) answersOf.set(key, (answersOf.get(key) ?? 0) + 1);
    const twice = [...answersOf].filter(([, count]) => count > 1).map(([key, count]) => `${key}: ${count}`);
    if (twice.length > 0) broken['no reassignment is applied twice (one stored answer per key)'] = twice;
    if (unanswered.length > 0)
      broken['every task change belongs to a keyed reassignment that stored its answer'] = unanswered
        .slice(0, 8)
        .map((row) => `task ${row.task_id} in transaction ${row.tx}`);
    const unapplied = reassignments.filter((r) => r.acknowledged && answersOf.get(r.key) !== 1);
    if (unapplied.length > 0)
      broken['every acknowledged reassignment was applied once'] = unapplied.slice(0, 8).map((r) => r.key);
    // Charged once per key: steady and through the rolling restart every key reaches an instance
    // and is charged once, its retries never. In the SIGKILL phase the limiter comes before the
    // claim (docs/rules.md#idempotent-bulk-reassignment): a try the kill cut after its charge and
    // before its claim leaves no key behind, so the key's next try is charged again. A key is charged
    // at most once, then, and once more only when it was sent again.
    for (const { phase: name, spent, keys, sentAgain } of charges) {
      const wrong = [...spent].filter(([user, units]) =>
        name === 'sigkill' ? units > keys.get(user)! + sentAgain.get(user)! : units !== keys.get(user),
      );
      if (wrong.length > 0)
        broken[`the ${name} phase charged the bulk budget once per key`] = wrong.map(
          ([user, units]) => `user ${user}: ${units} units for ${keys.get(user)} keys`,
        );
    }
    const retried = reassignments.filter((r) => r.tries > 1);
    t.diagnostic(
      `${reassignments.length} keyed reassignments, ${retried.length} sent again with their key ` +
        `(${retried.filter((r) => r.acknowledged).length} then acknowledged), ${answers.length} answers stored; ` +
        `charges: ${charges.map((c) => `${c.phase} ${JSON.stringify(Object.fromEntries(c.spent))} for ${JSON.stringify(Object.fromEntries(c.keys))} keys`).join('; ')}`,
    );
    const acknowledged = [...attempts.values()].flat().filter((attempt) => attempt.acknowledged).length;
    t.diagnostic(
      `${exchanges.length} requests, ${acknowledged} acknowledged task reassignments checked, ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    assert.deepEqual(broken, {});
  });
});
