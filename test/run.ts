// npm test's runner: every test file through node:test, two at a time, the long-running ones first.
//
// Why not `node --test` itself: it sorts the files by name, which left the longest files
// (test/process) to the end, the longest of them running alone for the suite's last 20 s. Here the
// directories of long files come first, and in each the larger files (more to run) first. Two at
// a time, as before: three, on two cores shared with other work, stretched every file and made
// the timing-bound tests fail. Run one file: node_modules/.bin/node --test test/http/bulk.test.ts
import { statSync } from 'node:fs';
import { glob } from 'node:fs/promises';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

const CONCURRENCY = 2;
/**
 * The embedded database's WebAssembly on V8's baseline compiler only: each file boots PGlite once,
 * and optimising its hot functions in the background cost about a second of CPU per file, more
 * than it won back in the queries of a test file. The servers and command lines the tests start
 * run as they ship.
 */
const EXEC_ARGV = ['--liftoff-only'];
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
run({
  files: files.map((file) => `${root}${file}`),
  concurrency: CONCURRENCY,
  execArgv: EXEC_ARGV,
  cwd: root,
  signal: stop.signal,
})
  .on('test:fail', (event) => {
    if (!event.todo) process.exitCode = 1;
  })
  .compose(spec)
  .pipe(process.stdout);
