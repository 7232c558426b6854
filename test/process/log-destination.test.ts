// The log destination in a process of its own: every line logged is on stdout, however the process ends.
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

const written = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.includes('"msg":"line"'))
    .map((line) => (JSON.parse(line) as { i: number }).i);

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

  it('has written each line before the logging call returns, so even a SIGKILL loses none', async () => {
    // SIGKILL runs no exit handler and no further turn of the event loop: a line still pending in
    // a buffer or on its way through a pool thread is lost.
    const { stdout, code } = await run(3, "process.kill(process.pid, 'SIGKILL');");
    assert.equal(code, null);
    assert.deepEqual(written(stdout), [0, 1, 2]);
  });
});
