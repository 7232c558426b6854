// The buffered log destination in a process of its own: its lines reach stdout at exit, on a crash and when the service goes quiet.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const OPTIONS = fileURLToPath(new URL('../../src/logger-options.ts', import.meta.url));

/**
 * Runs a script that logs `lines` lines (far less than a batch) through logDestination() and then
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
  it('writes the lines still waiting in its buffer when the process exits', async () => {
    const { stdout, code } = await run(3, 'process.exit(0);');
    assert.equal(code, 0);
    assert.deepEqual(written(stdout), [0, 1, 2]);
  });

  it('writes them when the process dies of an uncaught exception', async () => {
    const { stdout, code } = await run(3, "throw new Error('crash');");
    assert.equal(code, 1);
    assert.deepEqual(written(stdout), [0, 1, 2]);
  });

  it("writes a quiet process's lines without waiting for a full batch or an exit", async () => {
    // The process stays up for 3 s, then is killed (no exit handler runs): its lines can only have
    // been written by the flush timer, the batch being far from full.
    const { stdout, code } = await run(
      2,
      `const keep = setInterval(() => {}, 1000);
       setTimeout(() => { clearInterval(keep); process.kill(process.pid, 'SIGKILL'); }, 3000);`,
    );
    assert.equal(code, null, 'killed, so no exit handler ran');
    assert.deepEqual(written(stdout), [0, 1]);
  });
});
