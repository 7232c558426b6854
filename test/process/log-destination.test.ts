// The log destination: every line on stdout however the process ends; an unread stdout holds nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const OPTIONS = fileURLToPath(new URL('../../src/logger-options.ts', import.meta.url));

/**
 * Runs a script that logs `lines` lines through logDestination() and then
 * does `then`; resolves with its stdout and exit code once it has exited.
 */
function run(lines: number, then: string): Promise<{ stdout: string; code: number | null }> {
  const script = `
    import pino from 'pino';
    import { logDestination } from ${JSON.stringify(OPTIONS)};
    const log = pino({ level: 'info' }, logDestination());
    for (let i = 0; i < ${lines}; i++) log.info({ i }, 'line');
    ${then}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.resume();
  return new Promise((resolve) => child.once('exit', (code) => resolve({ stdout, code })));
}

/**
 * The lines' numbers in the order of their numbers: at exit, pino writes what is pending at once
 * while the write already in flight on libuv's pool finishes, so that one may come out last (each
 * line carries its time). Exit waits for the pool, so it is not lost.
 */
const written = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.includes('"msg":"line"'))
    .map((line) => (JSON.parse(line) as { i: number }).i)
    .sort((a, b) => a - b);

describe('the log destination', () => {
  it('has written every line logged when the process exits', async () => {
    const { stdout, code } = await run(3, 'process.exit(0);');
    assert.equal(code, 0);
    assert.deepEqual(written(stdout), [0, 1, 2]);
  });

  it('has written them when the process dies of an uncaught exception', async () => {
    const { stdout, code } = await run(3, "throw new Error('crash');");
    assert.equal(code, 1);
    assert.deepEqual(written(stdout), [0, 1, 2]);
  });

  it('writes the lines while the process runs, not only at exit', async () => {
    // No batch held back for a size or an exit: a quarter of a second later the lines are out, and
    // a SIGKILL then (no exit handler runs) loses none of them.
    const { stdout, code } = await run(3, "setTimeout(() => process.kill(process.pid, 'SIGKILL'), 250);");
    assert.equal(code, null);
    assert.deepEqual(written(stdout), [0, 1, 2]);
  });

  it('keeps logging when nobody reads stdout: lines beyond 16 MiB pending are dropped, not kept', {
    timeout: 60_000,
  }, async () => {
    // 40 MiB of lines into a pipe nobody reads: the logging calls all return, and what is kept in
    // memory (the live heap after a full collection) stays near the bound.
    const script = `
      import pino from 'pino';
      import { logDestination } from ${JSON.stringify(OPTIONS)};
      const destination = logDestination();
      let dropped = 0;
      destination.on('drop', () => dropped++);
      const log = pino({ level: 'info' }, destination);
      const pad = 'x'.repeat(1000);
      globalThis.gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 40_000; i++) log.info({ i, pad }, 'line');
      globalThis.gc();
      const grown = process.memoryUsage().heapUsed - before;
      process.stderr.write(JSON.stringify({ dropped, grown }) + '\\n');
      process.kill(process.pid, 'SIGKILL');
    `;
    const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    await new Promise((resolve) => child.once('exit', resolve));
    const { dropped, grown } = JSON.parse(stderr.trim().split('\n').at(-1)!) as {
      dropped: number;
      grown: number;
    };
    assert.ok(dropped > 15_000, `${dropped} lines dropped of 40,000`);
    assert.ok(grown < 24 * 1024 * 1024, `the live heap grew by ${Math.round(grown / 1024 / 1024)} MiB`);
  });
});
