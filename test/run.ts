// npm test's runner: every test file through node:test, three at a time, long-running directories first.
//
// Why not `node --test` itself: it sorts the files by name, which left the longest files
// (test/process) to the end, one of them running alone at the very end. And three at a time
// on two cores: about a fifth of the suite's time is files waiting on what they drive (servers and
// command lines they start, Chromium, PostgreSQL and Redis restarts, real-clock faults), during
// which a core would stay idle. Run one file: node_modules/.bin/node --test test/http/bulk.test.ts
import { glob } from 'node:fs/promises';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

const CONCURRENCY = 3;
/** Directories whose files take longest, first; any other directory comes after them, by name. */
const LONGEST_FIRST = ['process', 'e2e', 'deploy', 'integration', 'fuzz', 'http'];

const root = fileURLToPath(new URL('../', import.meta.url));
const rank = (file: string) => {
  const at = LONGEST_FIRST.indexOf(file.split('/')[1]!);
  return at === -1 ? LONGEST_FIRST.length : at;
};
const files: string[] = [];
for await (const file of glob('test/**/*.test.ts', { cwd: root })) files.push(file);
files.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));

// The files, and the servers and command lines they start, share Node's compile cache.
process.env.NODE_COMPILE_CACHE ??= `${root}node_modules/.cache/node-compile`;
run({ files: files.map((file) => `${root}${file}`), concurrency: CONCURRENCY, cwd: root })
  .on('test:fail', (event) => {
    if (!event.todo) process.exitCode = 1;
  })
  .compose(spec)
  .pipe(process.stdout);
