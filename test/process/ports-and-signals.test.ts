// A shared host (docs/rules.md#deployment): taken ports, a used data directory, repeated signals.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fetch, listeningUrl, startServer } from '../helpers/server-process.ts';

const directories: string[] = [];
after(() => Promise.all(directories.map((d) => rm(d, { recursive: true, force: true }))));

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tp-ports-'));
  directories.push(dir);
  return dir;
}

/** A port some other process holds, for the time of a test. */
async function takenPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

/** The output's lines that are a stack trace's frames. */
const stackLines = (output: string) => output.split('\n').filter((line) => /^\s+at /.test(line));

describe('a port that is taken', () => {
  for (const variable of ['PORT', 'METRICS_PORT'] as const) {
    it(`stops the start with one line naming ${variable} and the port`, async (t) => {
      const { port, server: holder } = await takenPort();
      t.after(() => holder.close());
      const server = startServer({ DATA_DIR: await dataDir(), [variable]: String(port) });
      t.after(() => server.child.kill('SIGKILL'));
      assert.equal(await server.exited, 1, server.output());
      assert.match(
        server.output(),
        new RegExp(`^${variable}=${port} cannot be used: 127\\.0\\.0\\.1:${port} is taken`, 'm'),
      );
      assert.deepEqual(stackLines(server.output()), [], 'no stack trace');
      assert.doesNotMatch(server.output(), /Server listening/);
    });
  }
});

describe('a data directory in use', () => {
  it('stops a second server on it with one line, and the first serves on', async (t) => {
    const dir = await dataDir();
    const first = startServer({ DATA_DIR: dir });
    t.after(() => first.child.kill('SIGKILL'));
    const url = await listeningUrl(first.output, first.exited);
    const second = startServer({ DATA_DIR: dir });
    t.after(() => second.child.kill('SIGKILL'));
    assert.equal(await second.exited, 1, second.output());
    assert.match(second.output(), /the embedded database in .* is in use by another process/);
    assert.deepEqual(stackLines(second.output()), [], 'no stack trace');
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
  });
});

describe('a data directory the service cannot use', () => {
  /** Starts a server on DATA_DIR=`dir` and expects one line naming DATA_DIR and exit code 1. */
  async function refused(
    t: { after(fn: () => void): void },
    dir: string,
    why: RegExp,
    as: { uid: number; gid: number } | null = null,
  ) {
    const server = startServer({ DATA_DIR: dir }, as);
    t.after(() => server.child.kill('SIGKILL'));
    assert.equal(await server.exited, 1, server.output());
    const lines = server.output().trimEnd().split('\n');
    assert.equal(lines.length, 1, `one line:\n${server.output()}`);
    assert.ok(lines[0]!.startsWith(`DATA_DIR=${dir} cannot be used: `), lines[0]);
    assert.match(lines[0]!, why);
    assert.match(lines[0]!, /choose another DATA_DIR, or use DATABASE_URL$/);
  }

  it('stops the start with one line when the path is too long for its lock’s Unix socket', async (t) => {
    const parent = await dataDir();
    const dir = join(parent, 'd'.repeat(107 - parent.length - 1)); // 107 characters, as in the report
    assert.equal(dir.length, 107);
    await refused(t, dir, /its lock .* would be a Unix socket of 125 bytes, and one may have at most 107/);
  });

  it('stops the start with one line when the path is under a file', async (t) => {
    const file = join(await dataDir(), 'a-file');
    await writeFile(file, '');
    await refused(t, join(file, 'data'), /is a file/);
  });

  it('stops the start with one line when the process may not write there', async (t) => {
    const dir = await dataDir();
    await chmod(dir, 0o555);
    // Root writes anywhere: the server runs as nobody then (the test's files are readable by all).
    const nobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : null;
    await refused(t, dir, /this process \(uid \d+\) may not write there/, nobody);
  });
});

describe('signals during the drain', () => {
  it('lets a second SIGINT and SIGTERM pass without cutting the drain short', async (t) => {
    // A keep-alive connection left idle holds the drain open for half of SHUTDOWN_TIMEOUT.
    const server = startServer({ DATA_DIR: await dataDir(), SHUTDOWN_TIMEOUT: '6s' });
    t.after(() => server.child.kill('SIGKILL'));
    const url = new URL(await listeningUrl(server.output, server.exited));
    const agent = new Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    const status = await new Promise<number | undefined>((resolve, reject) =>
      httpRequest({ host: url.hostname, port: url.port, path: '/healthz', agent }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      })
        .on('error', reject)
        .end(),
    );
    assert.equal(status, 200);

    server.child.kill('SIGTERM');
    const deadline = Date.now() + 10_000;
    while (!/shutting down/.test(server.output())) {
      assert.ok(Date.now() < deadline, `no drain started:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    server.child.kill('SIGINT');
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, `exited by the signal, not by the drain:\n${server.output()}`);
    assert.match(server.output(), /SIGINT again: the stop goes on/);
  });
});
