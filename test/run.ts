// npm test's runner: the type-check and the lint beside every test file through node:test, the
// long-running files first.
//
// Why not `node --test` itself: it sorts the files by name, which left the longest files
// (test/process) to the end, the longest of them running alone for the suite's last 20 s. Here the
// directories of long files come first, and in each the larger files (more to run) first. Three at
// a time: two left the two cores a third idle while files waited on servers, browsers and real
// time. Run one file: node_modules/.bin/node --test test/http/bulk.test.ts
import { exec } from 'node:child_process';
import { statSync } from 'node:fs';
import { glob } from 'node:fs/promises';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const CONCURRENCY = 3;
/**
 * A test file lives seconds: V8's optimising compilers cost it more CPU in the background than
 * they win back. The embedded database's WebAssembly stays on the baseline compiler (each file
 * boots PGlite once), JavaScript stops at Maglev, and a larger young generation collects less
 * often (the figures are in the commits that chose them). The servers and command lines the tests
 * start run as they ship.
 */
const EXEC_ARGV = ['--liftoff-only', '--max-opt=2', '--max-semi-space-size=16'];
/** Directories whose files take longest, first; any other directory comes after them. */
const LONGEST_FIRST = ['process', 'e2e', 'deploy', 'integration', 'fuzz', 'http'];

const root = fileURLToPath(new URL('../', import.meta.url));
const rank = (file: string) => {
  const at = LONGEST_FIRST.indexOf(file.split('/')[1]!);
  return at === -1 ? LONGEST_FIRST.length : at;
};
const files: string[] = [];
for await (const file of glob('test/**/*.test.ts', { cwd: root })) files.push(file);
const size = new Map(files.map((file) => [file, statSync(`${root}${file}`).size]));
files.sort((a, b) => rank(a) - rank(b) || size.get(b)! - size.get(a)! || (a < b ? -1 : 1));

// The files, and the servers and command lines they start, share Node's compile cache.
process.env.NODE_COMPILE_CACHE ??= `${root}node_modules/.cache/node-compile`;
// Stopped, it stops the files it started, as `node --test` does, so that none is left running.
const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());

// The type-check and the lint run beside the first files rather than before them: the test files
// leave part of the two cores idle while they wait on servers and browsers. A failed check stops
// the files and prints what it said.
const CHECKS = ['npm run -s typecheck', 'node_modules/.bin/biome check .'];
const checks = CHECKS.map((command) =>
  promisify(exec)(command, { cwd: root, maxBuffer: 64 * 1024 * 1024 }).then(
    () => null,
    (error: { stdout?: string; stderr?: string }) => {
      process.exitCode = 1;
      stop.abort();
      return `\n${command} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`;
    },
  ),
);

const tests = run({
  files: files.map((file) => `${root}${file}`),
  concurrency: CONCURRENCY,
  execArgv: EXEC_ARGV,
  cwd: root,
  signal: stop.signal,
})
  .on('test:fail', (event) => {
    if (!event.todo) process.exitCode = 1;
  })
  .compose(spec);
tests.pipe(process.stdout, { end: false });
tests.once('end', async () => {
  for (const failure of await Promise.all(checks)) if (failure) process.stdout.write(failure);
});
