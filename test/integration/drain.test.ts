// The drain over real sockets: answers in flight, Connection: close, idle sockets after the grace.
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { drain, trackConnections } from '../../src/http/drain.ts';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

// The drain's timers are real (sockets and the kernel are in the test): short ones, with margins.
const GRACE_MS = 400;

/**
 * A server whose `/slow` answers only when the test says so; every other path answers at once.
 * `arrived` resolves once a `/slow` request has reached it.
 */
async function slowServer() {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrive: () => void = () => {};
  const arrived = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  const server = http.createServer((request, response) => {
    if (request.url === '/slow') {
      arrive();
      void released.then(() => response.end('slow'));
    } else response.end('fast');
  });
  trackConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, release, arrived };
}

/** One request on `agent`; resolves with the status, the Connection header and the body. */
function get(agent: http.Agent, port: number, path: string) {
  return new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, connection: response.headers.connection, body }),
        );
      })
      .on('error', reject);
  });
}

const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('drain', () => {
  it('answers the request in flight with Connection: close, refuses new connections, and ends drained', async (t) => {
    const { server, port, release, arrived } = await slowServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const inFlight = get(agent, port, '/slow');
    await arrived; // the request reaches the server
    const drained = drain(server, { idleGraceMs: GRACE_MS, timeoutMs: 5_000 });
    assert.equal(await connects(port), false, 'no new connection once the drain started');
    release();
    assert.deepEqual(await inFlight, { status: 200, connection: 'close', body: 'slow' });
    assert.equal(await drained, 'drained');
  });

  it('leaves an idle keep-alive connection open for the grace, answers a request on it with Connection: close', async (t) => {
    const { server, port } = await slowServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const before = await get(agent, port, '/fast');
    assert.equal(before.connection, 'keep-alive');
    const drained = drain(server, { idleGraceMs: GRACE_MS, timeoutMs: 5_000 });
    await sleep(GRACE_MS / 2);
    // The proxy's request on a connection it kept: answered, not reset, and the connection ends after it.
    const during = await get(agent, port, '/fast');
    assert.deepEqual(during, { status: 200, connection: 'close', body: 'fast' });
    assert.equal(await drained, 'drained');
  });

  it('closes a connection left idle once the grace is over, not before', async () => {
    const { server, port } = await slowServer();
    const socket = net.connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => socket.once('data', resolve));
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    socket.on('error', () => {}); // a reset would fail the assertion below through `closed`'s timing
    socket.resume();
    const started = Date.now();
    const outcome = await drain(server, { idleGraceMs: GRACE_MS, timeoutMs: 5_000 });
    assert.equal(outcome, 'drained');
    const after = (await closed) - started;
    assert.ok(after >= GRACE_MS - 20, `closed ${after} ms after the drain started`);
    socket.destroy();
  });

  it('gives up at the timeout on a request that never ends', async (t) => {
    const { server, port, release, arrived } = await slowServer();
    t.after(release);
    const agent = new http.Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    const stuck = get(agent, port, '/slow').catch((error: Error) => error);
    await arrived;
    assert.equal(await drain(server, { idleGraceMs: 100, timeoutMs: GRACE_MS }), 'timed-out');
    assert.ok((await stuck) instanceof Error, 'the unfinished request was cut at the timeout');
  });

  it('makes /readyz answer 503 draining at once', async (t) => {
    const { app, close } = await createTestApp();
    t.after(close);
    trackConnections(app.server);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    assert.equal((await get(agent, port, '/readyz')).status, 200);
    const drained = drain(app.server, { idleGraceMs: GRACE_MS, timeoutMs: 5_000 });
    const ready = await get(agent, port, '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(ready.connection, 'close');
    assert.equal(JSON.parse(ready.body).status, 'draining');
    assert.equal(await drained, 'drained');
  });
});
