// The HTTP checks of test/container/run.sh, from outside the containers: one subcommand per step.
//   node test/container/probe.ts first-start <base>             sign in, reassign, get a 429
//   node test/container/probe.ts after-restart <base> <json>     the reassignment is still there
//   node test/container/probe.ts fleet <nginx> <metrics-1> <metrics-2> <api-1 container> <api-2 container>
//   node test/container/probe.ts browser <nginx>                 Chromium signs in and reassigns
//   node test/container/probe.ts own-bucket <nginx>              (run inside the fleet's network)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

const DEMO_PASSWORD = 'demo-password';
const BULK = '/api/employee/tasks/bulk';

/** A browser-like client: a cookie jar and the CSRF token, against one base URL. */
class Client {
  private readonly cookies = new Map<string, string>();
  private csrf: string | null = null;
  readonly base: string;

  constructor(base: string) {
    this.base = base;
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...(this.cookies.size > 0 ? { cookie: this.cookieHeader } : {}),
        ...(this.csrf && method !== 'GET' ? { 'x-csrf-token': this.csrf } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      this.cookies.set(name!.trim(), value.join('='));
    }
    const text = await response.text();
    const json = response.headers.get('content-type')?.startsWith('application/json')
      ? JSON.parse(text)
      : null;
    return { status: response.status, headers: response.headers, text, json };
  }

  async signIn(email: string): Promise<void> {
    this.csrf = (await this.request('GET', '/api/csrf-token')).json.csrfToken;
    const login = await this.request('POST', '/api/auth/login', { email, password: DEMO_PASSWORD });
    assert.equal(login.status, 200, `sign-in of ${email}: ${login.text}`);
    this.csrf = login.json.csrfToken;
  }
}

/** Waits for 200 from /readyz (the service boots its database first). */
async function ready(base: string, seconds = 90): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${base}/readyz`);
      last = `${response.status} ${await response.text()}`;
      if (response.status === 200) return;
    } catch (error) {
      last = String((error as Error).cause ?? error);
    }
    await new Promise((resolve) => setTimeout(resolve, 500)); // another process is starting: real time
  }
  throw new Error(`${base}/readyz did not answer 200 within ${seconds} s (last: ${last})`);
}

async function employeeId(client: Client, email: string): Promise<number> {
  const employees = (await client.request('GET', '/api/employee/employees')).json.employees as {
    id: number;
    email: string;
  }[];
  const found = employees.find((employee) => employee.email === email);
  assert.ok(found, `${email} is an employee`);
  return found.id;
}

/** Counts of `http_requests_total` for a route and status, from a metrics listener's text. */
/** Waits (at most 30 s) until every instance's metrics say it decides on Redis, not degraded. */
async function onRedis(metricsUrls: readonly string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const pages = await Promise.all(metricsUrls.map(async (url) => (await fetch(`${url}/metrics`)).text()));
    const degraded = pages.filter((page) => /^rate_limit_store_degraded\{[^}]*\} 1$/m.test(page));
    if (degraded.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${degraded.length} instance(s) still off Redis after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function requestCount(metrics: string, route: string, status: number, method = 'GET'): Promise<number> {
  const response = await fetch(`${metrics}/metrics`);
  assert.equal(response.status, 200, `${metrics}/metrics`);
  assert.match(String(response.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const line = text
    .split('\n')
    .find((l) =>
      l.startsWith(`http_requests_total{method="${method}",route="${route}",status="${status}"} `),
    );
  return line ? Number(line.split(' ').at(-1)) : 0;
}

const commands: Record<string, (...args: string[]) => Promise<void>> = {
  async 'first-start'(base) {
    await ready(base!);
    const alice = new Client(base!);
    await alice.signIn('alice@example.com');
    const bob = await employeeId(alice, 'bob@example.com');
    const taskIds = [7, 8, 9];
    const reassigned = await alice.request('PATCH', BULK, { taskIds, assigneeId: bob });
    assert.equal(reassigned.status, 200, reassigned.text);
    assert.deepEqual(
      reassigned.json.results,
      taskIds.map((taskId) => ({ taskId, status: 'reassigned' })),
    );
    // The bulk budget (30 per 15 minutes, one spent above): the 30th request after it is refused.
    const statuses: number[] = [];
    let refusal: Awaited<ReturnType<Client['request']>> | null = null;
    for (let i = 0; i < 30; i++) {
      const response = await alice.request('PATCH', BULK, { taskIds: [10], assigneeId: bob });
      statuses.push(response.status);
      if (response.status === 429) refusal = response;
    }
    assert.deepEqual(statuses, [...Array(29).fill(200), 429]);
    assert.equal(refusal!.json.code, 'TASK_BULK_RATE_LIMIT');
    assert.match(String(refusal!.headers.get('retry-after')), /^\d+$/);
    console.log(JSON.stringify({ taskIds, assigneeId: bob }));
  },

  async 'after-restart'(base, expected) {
    await ready(base!);
    const { taskIds, assigneeId } = JSON.parse(expected!) as { taskIds: number[]; assigneeId: number };
    const alice = new Client(base!);
    await alice.signIn('alice@example.com');
    for (const id of taskIds) {
      const task = await alice.request('GET', `/api/employee/tasks/${id}`);
      assert.equal(task.status, 200, task.text);
      assert.equal(task.json.task.assigneeId, assigneeId, `task ${id} is still bob's after the restart`);
    }
    console.log(`tasks ${taskIds.join(', ')} still assigned to ${assigneeId} after the restart`);
  },

  async fleet(nginx, metrics1, metrics2, container1, container2) {
    await ready(nginx!);
    const instances = [
      { metrics: metrics1!, container: container1! },
      { metrics: metrics2!, container: container2! },
    ];

    // A session made through nginx works on both instances: nginx spreads the requests over
    // both, and each instance, asked directly inside its container, knows the session.
    const alice = new Client(nginx!);
    await alice.signIn('alice@example.com');
    const before = await Promise.all(instances.map((i) => requestCount(i.metrics, '/api/auth/me', 200)));
    for (let i = 0; i < 6; i++) assert.equal((await alice.request('GET', '/api/auth/me')).status, 200);
    const after = await Promise.all(instances.map((i) => requestCount(i.metrics, '/api/auth/me', 200)));
    assert.equal(after[0]! - before[0]! + after[1]! - before[1]!, 6);
    assert.ok(
      after.every((count, i) => count > before[i]!),
      `both instances answered: ${before} → ${after}`,
    );
    for (const { container } of instances) {
      const status = execFileSync('podman', [
        'exec',
        container,
        'node',
        '-e',
        `fetch('http://127.0.0.1:3000/api/auth/me', { headers: { cookie: process.argv[1] } })
          .then((r) => console.log(r.status))`,
        alice.cookieHeader,
      ])
        .toString()
        .trim();
      assert.equal(status, '200', `${container} knows the session made through nginx`);
    }

    // One bulk budget for the fleet: 40 at once through nginx, exactly 30 admitted. Both instances
    // on Redis first: one that started before Redis answered (or missed a deadline on a busy
    // machine) decides on its own budget until Redis answers it again, by design.
    await onRedis(instances.map((i) => i.metrics));
    const bob = await employeeId(alice, 'bob@example.com');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        alice.request('PATCH', BULK, { taskIds: [20 + i], assigneeId: bob }),
      ),
    );
    const tally: Record<string, number> = {};
    for (const a of answers) {
      const key = a.status === 200 ? '200' : `${a.status} ${a.json?.code}`;
      tally[key] = (tally[key] ?? 0) + 1;
    }
    const degraded = await Promise.all(
      instances.map(async (i) =>
        (await (await fetch(`${i.metrics}/metrics`)).text())
          .split('\n')
          .filter((line) => line.startsWith('rate_limit_store_degraded{'))
          .join(' '),
      ),
    );
    assert.deepEqual(
      tally,
      { 200: 30, '429 TASK_BULK_RATE_LIMIT': 10 },
      `one budget for both instances (their Redis state: ${degraded.join('; ')})`,
    );
    const bulkByInstance = await Promise.all(
      instances.map(async (i) => ({
        admitted: await requestCount(i.metrics, BULK, 200, 'PATCH'),
        refused: await requestCount(i.metrics, BULK, 429, 'PATCH'),
      })),
    );
    assert.ok(
      bulkByInstance.every((counts) => counts.admitted + counts.refused > 0),
      `both instances took bulk requests: ${JSON.stringify(bulkByInstance)}`,
    );

    // The per-address bucket is keyed by the address nginx appends, not by one a client sends:
    // unauthenticated requests, each with another forged X-Forwarded-For, spend one bucket. What
    // is left of it is read first (the browser's page spent some before signing in), spending none.
    const visitor = new Client(nginx!);
    const { controls } = (await visitor.request('GET', '/api/rate-limits')).json as {
      controls: { control: string; remaining: number }[];
    };
    const left = controls.find((control) => control.control === 'api-unauthenticated')!.remaining;
    assert.ok(left > 90, `${left} left of the address's 100`);
    const statuses: Record<number, number> = {};
    for (let i = 0; i <= left; i++) {
      const response = await visitor.request('GET', '/api/auth/me', undefined, {
        'x-forwarded-for': `198.51.100.${i}`,
      });
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      if (response.status === 429) assert.equal(response.json.code, 'API_RATE_LIMIT_UNAUTHENTICATED');
    }
    assert.deepEqual(statuses, { 401: left, 429: 1 });

    // /metrics: on the metrics ports, not through nginx.
    const viaNginx = await visitor.request('GET', '/metrics');
    assert.equal(viaNginx.status, 404);
    assert.equal(viaNginx.json.code, 'NOT_FOUND');
    for (const { metrics } of instances) assert.ok((await requestCount(metrics, '/api/auth/me', 200)) > 0);
    console.log(
      `fleet: session on both instances, bulk ${JSON.stringify(tally)} (per instance ${JSON.stringify(bulkByInstance)}), forged X-Forwarded-For ignored, /metrics 404 through nginx`,
    );
  },

  /** A person at the fleet's published port: Chromium signs in and reassigns (Carol: Alice's budget is spent). */
  async browser(nginx) {
    await ready(nginx!);
    // Imported here: `own-bucket` runs this file inside a container, without the repository.
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { launchChromium, signInAndReassign } = await import('../helpers/browser.ts');
    const profile = await mkdtemp(join(tmpdir(), 'portal-fleet-'));
    const context = await launchChromium(profile);
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      page.setDefaultTimeout(30_000);
      await signInAndReassign(page, nginx!, {
        email: 'carol@example.com',
        password: DEMO_PASSWORD,
        taskIds: [2, 5],
        assignee: 'Bob Nguyen',
      });
    } finally {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    }
    console.log(`browser: Chromium signed in and reassigned tasks 2 and 5 at ${nginx}`);
  },

  /** From another address (a container in the fleet's network): a bucket of its own, still whole. */
  async 'own-bucket'(nginx) {
    const response = await new Client(nginx!).request('GET', '/api/auth/me');
    assert.equal(response.status, 401, response.text);
    assert.equal(response.headers.get('ratelimit-remaining'), '99');
    console.log('another client address: its own bucket (401, 99 remaining)');
  },
};

const [command, ...args] = process.argv.slice(2);
const run = commands[command ?? ''];
if (!run) {
  console.error(`unknown command ${command}; one of ${Object.keys(commands).join(', ')}`);
  process.exit(2);
}
await run(...args);
