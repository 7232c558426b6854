// The real entry point: start on embedded defaults, the demo accounts, serve, stop on SIGTERM.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LOCK_SOCKET } from '../../src/db/data-dir-lock.ts';
import { freePort } from '../helpers/redis-server.ts';
import { fetch, listeningUrl, startServer as start } from '../helpers/server-process.ts';

/** Signs alice in over real HTTP: the pre-session cookie and its token, then the session's. */
async function signInAsAlice(url: string) {
  const bootstrap = await fetch(`${url}/api/csrf-token`);
  const preSession = bootstrap.headers.getSetCookie()[0]!.split(';')[0]!;
  const { csrfToken } = (await bootstrap.json()) as { csrfToken: string };
  const login = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { cookie: preSession, 'x-csrf-token': csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'alice@example.com', password: 'demo-password' }),
  });
  assert.equal(login.status, 200);
  const session = login.headers
    .getSetCookie()
    .find((line) => line.startsWith('tp_session='))!
    .split(';')[0]!;
  const { csrfToken: sessionToken } = (await login.json()) as { csrfToken: string };
  return { preSession, csrfToken, session, sessionToken };
}

const directories: string[] = [];
after(() => Promise.all(directories.map((d) => rm(d, { recursive: true, force: true }))));

/** The TCP ports `pid` listens on, from its socket descriptors and the kernel's socket tables. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set(
    readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        return match ? [match[1]!] : [];
      } catch {
        return []; // closed meanwhile
      }
    }),
  );
  const ports: number[] = [];
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // fields: sl, local address, remote address, state (0A: LISTEN), …, inode (the 10th)
      if (fields[3] === '0A' && inodes.has(fields[9]!))
        ports.push(Number.parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports.sort((a, b) => a - b);
}

describe('src/server.ts', () => {
  it('seeds and prints the demo accounts, serves, and exits 0 on SIGTERM', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tp-server-'));
    directories.push(dataDir);
    const server = start({ DATA_DIR: dataDir });
    const url = await listeningUrl(server.output, server.exited);
    for (const email of ['alice@example.com', 'bob@example.com', 'carol@example.com', 'admin@example.com']) {
      assert.match(server.output(), new RegExp(email.replace('.', '\\.')));
    }
    assert.match(server.output(), /demo-password/);
    assert.doesNotMatch(
      server.output(),
      /SESSION_SECRET=|\$argon2id\$|scrypt\$/,
      'no secret or hash is printed',
    );
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.match(server.output(), /shutting down/);
  });

  it('closes cleanly without listening when SIGTERM comes during the start, and starts again on the same data', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tp-server-'));
    directories.push(dataDir);
    const server = start({ DATA_DIR: dataDir });
    // The embedded database writing its directory: the signal handlers are in place, and the
    // start (the database, the migrations, the seed's hashes) has a second or more to go.
    const deadline = Date.now() + 60_000;
    while (readdirSync(dataDir).filter((entry) => entry !== LOCK_SOCKET).length === 0) {
      assert.ok(Date.now() < deadline, `the database directory stayed empty:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output());
    assert.match(server.output(), /the signal came during the start/);
    assert.doesNotMatch(server.output(), /Server listening/);

    const again = start({ DATA_DIR: dataDir });
    const url = await listeningUrl(again.output, again.exited);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
  });

  it('serves /metrics on METRICS_PORT only, and listens on no second port with METRICS_PORT=0', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tp-server-'));
    directories.push(dataDir);
    const metricsPort = await freePort();
    const server = start({ DATA_DIR: dataDir, METRICS_PORT: String(metricsPort) });
    const url = await listeningUrl(server.output, server.exited);
    assert.match(
      server.output(),
      new RegExp(`Metrics listening at http://127\\.0\\.0\\.1:${metricsPort}/metrics`),
    );
    assert.equal(listeningPorts(server.child.pid!).length, 2);
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(scraped.status, 200);
    assert.match(await scraped.text(), /^# TYPE http_requests_total counter$/m);
    const publicPort = await fetch(`${url}/metrics`);
    assert.equal(publicPort.status, 404);
    assert.equal(((await publicPort.json()) as { code: string }).code, 'NOT_FOUND');
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    await assert.rejects(fetch(`http://127.0.0.1:${metricsPort}/metrics`), 'closed with the app');

    const without = start({ DATA_DIR: dataDir, METRICS_PORT: '0' });
    const publicUrl = await listeningUrl(without.output, without.exited);
    assert.deepEqual(listeningPorts(without.child.pid!), [Number(new URL(publicUrl).port)]);
    assert.doesNotMatch(without.output(), /Metrics listening/);
    without.child.kill('SIGTERM');
    assert.equal(await without.exited, 0);
  });

  it('runs libuv’s pool (the password checks) below the event loop’s priority, and sizes it for the gate', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tp-server-'));
    directories.push(dataDir);
    const server = start({ DATA_DIR: dataDir, LOGIN_HASH_CONCURRENCY: '3' });
    t.after(() => server.child.kill('SIGKILL')); // gone already unless an assertion failed
    await listeningUrl(server.output, server.exited);
    const pid = server.child.pid!;
    // A thread's niceness is the 19th field of its stat line (after the parenthesised name).
    const threads = readdirSync(`/proc/${pid}/task`).map((tid) => ({
      name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(),
      nice: Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]),
    }));
    const pool = threads.filter((t) => t.name === 'libuv-worker');
    assert.equal(pool.length, 3 + 4, 'LOGIN_HASH_CONCURRENCY + 4 threads');
    assert.deepEqual(
      pool.map((t) => t.nice),
      pool.map(() => 10),
    );
    assert.equal(
      threads.find((t) => t.name === 'node-MainThread')?.nice,
      0,
      'the event loop keeps its priority',
    );
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });

  it('logs one line per answered request, with its fields and none of its secrets', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tp-server-'));
    directories.push(dataDir);
    const server = start({ DATA_DIR: dataDir });
    t.after(() => server.child.kill('SIGKILL'));
    const url = await listeningUrl(server.output, server.exited);
    const { preSession, csrfToken, session, sessionToken } = await signInAsAlice(url);
    assert.equal((await fetch(`${url}/api/auth/me`, { headers: { cookie: session } })).status, 200);
    assert.equal((await fetch(`${url}/api/nowhere?x=1`)).status, 404);

    const completed = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('"request completed"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The output is read from a pipe, in chunks: the last lines may still be on their way.
    const deadline = Date.now() + 10_000;
    while (completed().length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lines = completed();
    assert.deepEqual(
      lines.map((line) => [line.method, line.url, line.statusCode]),
      [
        ['GET', '/api/csrf-token', 200],
        ['POST', '/api/auth/login', 200],
        ['GET', '/api/auth/me', 200],
        ['GET', '/api/nowhere?x=1', 404],
      ],
    );
    for (const line of lines) {
      assert.equal(line.level, 30);
      assert.equal(typeof line.reqId, 'string');
      assert.equal(line.remoteAddress, '127.0.0.1');
      assert.equal(typeof line.responseTime, 'number');
    }
    assert.equal(new Set(lines.map((line) => line.reqId)).size, 4, 'each line its own request id');
    // Every log line, not only the request lines (the start banner names the demo password).
    const log = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .join('\n');
    assert.doesNotMatch(log, /incoming request/, 'no second line per request at info');
    for (const secret of [
      'demo-password',
      preSession.split('=')[1]!,
      session.split('=')[1]!,
      csrfToken,
      sessionToken,
    ])
      assert.ok(!log.includes(secret), 'no cookie, CSRF token or password is logged');
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });

  it('logs an announced 503 (one that says when to come back) in its request line only, never as an error', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tp-server-'));
    directories.push(dataDir);
    // A required breached-password API that refuses every connection.
    const server = start({
      DATA_DIR: dataDir,
      PASSWORD_BREACH_API: 'http://127.0.0.1:9',
      PASSWORD_BREACH_API_REQUIRED: 'true',
    });
    t.after(() => server.child.kill('SIGKILL'));
    const url = await listeningUrl(server.output, server.exited);
    const { session, sessionToken } = await signInAsAlice(url);
    for (let i = 0; i < 3; i++) {
      const change = await fetch(`${url}/api/auth/password`, {
        method: 'POST',
        headers: { cookie: session, 'x-csrf-token': sessionToken, 'content-type': 'application/json' },
        body: JSON.stringify({
          currentPassword: 'demo-password',
          newPassword: 'violet harbour cinder 93 slowly',
        }),
      });
      assert.equal(change.status, 503);
      assert.equal(((await change.json()) as { code: string }).code, 'PASSWORD_CHECK_UNAVAILABLE');
    }
    const lines = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const answered = () =>
      lines().filter((line) => line.msg === 'request completed' && line.statusCode === 503);
    const deadline = Date.now() + 10_000;
    while (answered().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(answered().length, 3, 'each 503 has its request line');
    assert.deepEqual(
      lines().filter((line) => Number(line.level) >= 50),
      [],
      'no error line for a refusal the service announced',
    );
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });

  it('stops at start with a message naming an invalid variable and its expected form', async () => {
    const server = start({
      RATE_LIMIT_BULK: '30 per 15 minutes',
      DATA_DIR: join(tmpdir(), 'tp-never-created'),
    });
    assert.equal(await server.exited, 1);
    assert.match(
      server.output(),
      /RATE_LIMIT_BULK="30 per 15 minutes" is invalid: expected <count>\/<duration>/,
    );
  });
});
