// docs/rules.md#the-edges-of-http under seeded hostile traffic on a real port.
//
// FUZZ_SEED picks the run (printed, so a failure can be replayed), FUZZ_RUNS its length:
//   FUZZ_RUNS=50000 FUZZ_SEED=123 node --test test/fuzz/http-edges.test.ts
// FUZZ_DATABASE=postgres runs it against PostgreSQL instead of the embedded database.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { createTestApp, DEMO_PASSWORD } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { skipUnless } from '../helpers/services.ts';
import {
  type FuzzRequest,
  httpRequest,
  type Identity,
  Random,
  type RawRequest,
  rawRequest,
} from './generators.ts';
import { type Answer, type Outcome, type RawOutcome, send, sendRaw, type Target } from './transport.ts';

after(closeTestDatabases);

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2500);
const IN_FLIGHT = 16;
/** Share of requests written on raw sockets (malformed request lines, NULs in headers, pipelining). */
const RAW_SHARE = 0.06;
const DATABASE = process.env.FUZZ_DATABASE === 'postgres' ? 'postgres' : 'embedded';

/**
 * Budgets high enough that 429s do not hide the other answers, low enough that some appear: the
 * fuzz's anonymous traffic shares one address, bulk has a budget per user, and logins with a wrong
 * password lock their account.
 */
const ENV = {
  RATE_LIMIT_UNAUTHENTICATED: `${Math.max(300, Math.round(RUNS / 6))}/15m`,
  RATE_LIMIT_AUTHENTICATED: '1000000/15m',
  RATE_LIMIT_BULK: `${Math.max(40, Math.round(RUNS / 40))}/15m`,
  RATE_LIMIT_LOGIN_ACCOUNT: '5/15m',
  RATE_LIMIT_LOGIN_IP: '1000000/15m',
};

interface TaskRow {
  id: number;
  assignee_id: number | null;
  updated_at: string | Date;
}

/** Cookies from Set-Cookie headers, as a Cookie header. */
function cookiesOf(answer: Answer, previous = ''): string {
  const jar = new Map(
    previous
      .split('; ')
      .filter(Boolean)
      .map((pair) => pair.split('=', 2) as [string, string]),
  );
  for (const line of answer.headers['set-cookie'] ?? []) {
    const [pair = ''] = line.split(';');
    const at = pair.indexOf('=');
    jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
}

function answered(outcome: Outcome): Answer {
  assert.equal(outcome.kind, 'answer', `setup request failed: ${JSON.stringify(outcome)}`);
  return (outcome as Extract<Outcome, { kind: 'answer' }>).answer;
}

/** An anonymous identity (pre-session CSRF cookie and token), and one signed in per email. */
async function identities(agent: http.Agent, target: Target): Promise<Identity[]> {
  const csrf = answered(await send(agent, target, { method: 'GET', path: '/api/csrf-token' }));
  const anonymous: Identity = {
    name: 'anonymous',
    cookie: cookiesOf(csrf),
    csrfToken: (JSON.parse(csrf.body) as { csrfToken: string }).csrfToken,
  };
  const signedIn: Identity[] = [];
  for (const email of ['alice@example.com', 'bob@example.com', 'admin@example.com']) {
    const pre = answered(await send(agent, target, { method: 'GET', path: '/api/csrf-token' }));
    const login = answered(
      await send(agent, target, {
        method: 'POST',
        path: '/api/auth/login',
        headers: {
          'content-type': 'application/json',
          cookie: cookiesOf(pre),
          'x-csrf-token': (JSON.parse(pre.body) as { csrfToken: string }).csrfToken,
        },
        body: JSON.stringify({ email, password: DEMO_PASSWORD }),
      }),
    );
    assert.equal(login.status, 200, `login of ${email}: ${login.body}`);
    signedIn.push({
      name: email,
      cookie: cookiesOf(login, cookiesOf(pre)),
      csrfToken: (JSON.parse(login.body) as { csrfToken: string }).csrfToken,
    });
  }
  return [anonymous, ...signedIn];
}

/** The contract's demands on one answer; the problems found, as sentences. */
function problemsOf(answer: Answer, method: string): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status}: ${answer.body.slice(0, 200)}`);
  if (answer.headers['x-content-type-options'] !== 'nosniff')
    problems.push(`${answer.status} without nosniff`);
  if (answer.status >= 300 && method !== 'HEAD') {
    let code: unknown;
    try {
      code = (JSON.parse(answer.body) as { code?: unknown }).code;
    } catch {
      code = undefined;
    }
    if (typeof code !== 'string')
      problems.push(`${answer.status} without a string code: ${answer.body.slice(0, 200)}`);
  }
  return problems;
}

function codeOf(answer: Answer): string {
  try {
    const code = (JSON.parse(answer.body) as { code?: unknown }).code;
    return typeof code === 'string' ? code : '-';
  } catch {
    return '-';
  }
}

describe('hostile traffic at the edges of HTTP', () => {
  it(`holds over ${RUNS} seeded requests (seed ${SEED}), ${IN_FLIGHT} in flight on keep-alive sockets`, async (t) => {
    if (DATABASE === 'postgres') {
      const skip = await skipUnless('postgres');
      if (skip) return t.skip(skip);
    }
    const testApp = await createTestApp({ env: ENV, database: DATABASE });
    t.after(testApp.close);
    await testApp.app.listen({ host: '127.0.0.1', port: 0 });
    const target: Target = { host: '127.0.0.1', port: (testApp.app.server.address() as AddressInfo).port };
    const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    t.after(() => agent.destroy());

    const people = await identities(agent, target);
    const before = await testApp.database.db.query<TaskRow>('SELECT id, assignee_id, updated_at FROM tasks');

    const random = new Random(SEED);
    const requests: (FuzzRequest | RawRequest)[] = Array.from({ length: RUNS }, () =>
      random.chance(RAW_SHARE) ? rawRequest(random) : httpRequest(random, people),
    );

    const pairs = new Map<string, number>();
    const problems: string[] = [];
    const applied: { taskIds: number[]; assigneeId: number }[] = [];
    let resets = 0;
    const count = (answer: Answer, method: string) => {
      const key = `${answer.status} ${method === 'HEAD' ? '(HEAD, no body)' : codeOf(answer)}`;
      pairs.set(key, (pairs.get(key) ?? 0) + 1);
    };
    const report = (request: FuzzRequest | RawRequest, problem: string) => {
      const what =
        request.kind === 'raw' ? `raw "${request.label}"` : `${request.method} ${request.path.slice(0, 120)}`;
      problems.push(`${what}: ${problem}`);
    };

    const onHttp = (request: FuzzRequest, outcome: Outcome) => {
      if (outcome.kind === 'error') {
        resets++;
        report(
          request,
          outcome.reusedSocket
            ? `${outcome.code} on a reused keep-alive socket (the answer before did not say Connection: close)`
            : `${outcome.code} before any answer`,
        );
        return;
      }
      count(outcome.answer, request.method);
      for (const problem of problemsOf(outcome.answer, request.method)) report(request, problem);
      if (request.bulk && outcome.answer.status === 200) {
        const { results } = JSON.parse(outcome.answer.body) as {
          results: { taskId: number; status: string }[];
        };
        const taskIds = request.bulk.taskIds as number[];
        if (results.length !== taskIds.length)
          report(request, 'a bulk answer without one result per task id');
        applied.push({
          taskIds: results.filter((r) => r.status === 'reassigned').map((r) => r.taskId),
          assigneeId: request.bulk.assigneeId as number,
        });
      }
    };

    const onRaw = (request: RawRequest, outcome: RawOutcome) => {
      for (const answer of outcome.answers) {
        count(answer, 'GET');
        for (const problem of problemsOf(answer, 'GET')) report(request, problem);
      }
      const last = outcome.answers.at(-1);
      if (!last) report(request, `no answer (${outcome.end})`);
      else if (outcome.end !== 'closed' && outcome.end !== 'idle') {
        resets++;
        report(request, `the connection ended with ${outcome.end} after ${outcome.answers.length} answer(s)`);
      } else if (outcome.end === 'closed' && last.headers.connection !== 'close') {
        report(request, 'closed after an answer that did not say Connection: close');
      }
    };

    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < requests.length) {
          const request = requests[next++]!;
          if (request.kind === 'raw') onRaw(request, await sendRaw(target, request.bytes));
          else onHttp(request, await send(agent, target, request));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;

    // Bulk is all or nothing: a task no successful bulk reassigned is as seeded, one that only
    // successful bulks to a single assignee reassigned carries that assignee.
    const after = new Map(
      (await testApp.database.db.query<TaskRow>('SELECT id, assignee_id, updated_at FROM tasks')).map(
        (row) => [row.id, row],
      ),
    );
    for (const seeded of before) {
      const now = after.get(seeded.id)!;
      const targets = new Set(applied.filter((a) => a.taskIds.includes(seeded.id)).map((a) => a.assigneeId));
      if (targets.size === 0) {
        if (now.assignee_id !== seeded.assignee_id || String(now.updated_at) !== String(seeded.updated_at))
          problems.push(`task ${seeded.id} changed although no successful bulk named it`);
      } else if (!targets.has(now.assignee_id as number)) {
        problems.push(
          `task ${seeded.id} has assignee ${now.assignee_id}, not one of ${[...targets].join(', ')}`,
        );
      }
    }

    // No change without its history entry and no entry without its change (docs/rules.md#tasks):
    // a seeded task's version is one more than its entries, a created one's equals them.
    const astray = await testApp.database.db.query<{ id: number }>(
      `SELECT t.id FROM tasks t
        WHERE t.version <> (SELECT count(*) FROM task_history h WHERE h.task_id = t.id)
                           + CASE WHEN t.created_by IS NULL THEN 1 ELSE 0 END`,
    );
    for (const { id } of astray) problems.push(`task ${id}: its version and its history disagree`);

    const raw = requests.filter((r) => r.kind === 'raw').length;
    const table = [...pairs].sort(([a], [b]) => a.localeCompare(b)).map(([pair, n]) => `${pair} ×${n}`);
    t.diagnostic(
      `fuzz seed ${SEED}: ${RUNS} requests (${RUNS - raw} keep-alive, ${raw} raw) in ${seconds.toFixed(1)} s, ` +
        `${pairs.size} distinct (status, code) pairs, ${resets} resets, ${problems.length} problems`,
    );
    t.diagnostic(`pairs: ${table.join(', ')}`);
    t.diagnostic(`replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} node --test test/fuzz/http-edges.test.ts`);

    assert.deepEqual(problems.slice(0, 25), [], `${problems.length} problems (first 25 shown)`);
    assert.ok(
      [...pairs.keys()].some((pair) => pair.startsWith('429 ')),
      'the run met a rate limit at least once',
    );
  });
});
