// The README's and docs' commands, run as written against started servers, their answers checked.
//
// A block's steps are split at blank lines and at the `# …` lines that show an answer; each step
// runs in one bash session (state carries over, as in a terminal) and its output is held against
// the answer shown under it: an HTTP status line and headers (`curl -i`), then a JSON body whose
// `"…"` strings stand for any value, or plain lines. Seconds that depend on when the test runs
// (`RateLimit-Reset`, `t=`, `Retry-After`, `retryAfter`) are compared as numbers of any value.
// Not run here: the container image and the compose fleet (.ci/run's last step,
// test/container/run.sh) and the production recipe (.ci/run's "a production copy").
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from '../helpers/redis-server.ts';
import { listeningUrl, startServer } from '../helpers/server-process.ts';
import { POSTGRES_URL, REDIS_URL, skipUnless } from '../helpers/services.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const directories: string[] = [];
after(() => Promise.all(directories.map((d) => rm(d, { recursive: true, force: true }))));

async function temporaryDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'docs-commands-'));
  directories.push(dir);
  return dir;
}

/** The first ```sh block after the heading `heading` of a Markdown file of the repository. */
async function shellBlock(file: string, heading: string): Promise<string> {
  const text = await readFile(join(ROOT, file), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `${file} has no heading "${heading}"`);
  const match = /```sh\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(match, `${file} has no sh block under "${heading}"`);
  return match[1]!;
}

interface Step {
  readonly command: string;
  /** The answer shown under it, `# ` taken off each line (`#` alone: a blank line). */
  readonly shown: readonly string[];
}

/** A block's steps: commands up to a blank line or to the answer shown under them. */
function steps(block: string): Step[] {
  const result: Step[] = [];
  let command: string[] = [];
  let shown: string[] = [];
  const close = () => {
    if (command.length > 0) result.push({ command: command.join('\n'), shown });
    command = [];
    shown = [];
  };
  for (const line of block.split('\n')) {
    if (line.startsWith('#')) shown.push(line.replace(/^# ?/, ''));
    else if (line.trim() === '') close();
    else {
      if (shown.length > 0) close();
      command.push(line);
    }
  }
  close();
  return result;
}

const MARK = '@@docs-commands-step@@';

/**
 * Runs the steps in one bash session in `cwd`, each followed by a mark, and gives each step's
 * output. The session is its own process group, ended with everything it started in the background.
 */
async function run(
  list: readonly Step[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<string[]> {
  const script = list.map((s) => `${s.command}\nprintf '\\n${MARK}\\n'`).join('\n');
  const child: ChildProcess = spawn('bash', ['-c', script], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (err += chunk));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), options.timeoutMs ?? 120_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  try {
    process.kill(-child.pid!, 'SIGTERM'); // servers the block started in the background
  } catch {
    // nothing left in the group
  }
  assert.equal(
    code,
    0,
    `the block failed (exit ${code}):\n${script}\n--- stdout\n${out}\n--- stderr\n${err}`,
  );
  const outputs = out.split(`\n${MARK}\n`);
  assert.equal(outputs.length, list.length + 1, `not every step ran:\n${out}\n${err}`);
  return outputs.slice(0, list.length);
}

/** Headers whose value is a number of seconds that depends on when the test runs. */
const ANY_SECONDS = /^(ratelimit-reset|retry-after)$/i;

/** Checks `output` against the answer shown under a step. */
function assertShown(output: string, shown: readonly string[], step: string): void {
  if (shown.length === 0) return;
  const label = `the answer of:\n${step}\n--- got\n${output}`;
  let lines = output.replace(/\r/g, '').split('\n');
  let expected = [...shown];
  if (expected[0]!.startsWith('HTTP/')) {
    assert.equal(lines[0], expected[0], label);
    const blank = lines.indexOf('');
    const headers = new Map(
      lines
        .slice(1, blank)
        .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const shownBlank = expected.indexOf('');
    const shownHeaders = expected.slice(1, shownBlank === -1 ? undefined : shownBlank);
    for (const header of shownHeaders) {
      const name = header.slice(0, header.indexOf(':')).toLowerCase();
      const value = header.slice(header.indexOf(':') + 1).trim();
      const actual = headers.get(name);
      assert.ok(actual !== undefined, `no ${name} header in ${label}`);
      if (ANY_SECONDS.test(name)) assert.match(actual, /^\d+$/, label);
      else if (name === 'ratelimit')
        assert.equal(actual.replace(/;t=\d+/, ';t=_'), value.replace(/;t=\d+/, ';t=_'), label);
      else assert.equal(actual, value, label);
    }
    if (shownBlank === -1) return;
    lines = lines.slice(blank + 1);
    expected = expected.slice(shownBlank + 1);
  }
  const text = lines.join('\n').trim();
  if (expected[0]!.trimStart().startsWith('{')) {
    assertShape(JSON.parse(text), JSON.parse(expected.join('')), label);
    return;
  }
  assert.deepEqual(
    text.split('\n').map((l) => l.trim()),
    expected.map((l) => l.trim()),
    label,
  );
}

/** The same keys, lengths and values, `"…"` standing for anything and `retryAfter` for any number. */
function assertShape(actual: unknown, shown: unknown, label: string, key = ''): void {
  if (typeof shown === 'string' && shown.includes('…')) return;
  if (key === 'retryAfter' && typeof shown === 'number') {
    assert.equal(typeof actual, 'number', label);
    return;
  }
  if (Array.isArray(shown)) {
    assert.ok(Array.isArray(actual) && actual.length === shown.length, `${key}: ${label}`);
    for (const [i, item] of shown.entries()) assertShape((actual as unknown[])[i], item, label, key);
    return;
  }
  if (shown !== null && typeof shown === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${key}: ${label}`);
    assert.deepEqual(Object.keys(actual as object).sort(), Object.keys(shown).sort(), `${key}: ${label}`);
    for (const [k, v] of Object.entries(shown))
      assertShape((actual as Record<string, unknown>)[k], v, label, k);
    return;
  }
  assert.equal(actual, shown, `${key}: ${label}`);
}

/** `text` with each of `pairs`' first members replaced by its second, everywhere. */
const substitute = (text: string, pairs: Record<string, string>) =>
  Object.entries(pairs).reduce((t, [from, to]) => t.split(from).join(to), text);

describe('the README and the docs, run as written', () => {
  it("README: the walk-through with curl answers as shown, and the accounts' commands run", async () => {
    const dataDir = await temporaryDir();
    const server = startServer({ DATA_DIR: dataDir });
    try {
      const url = await listeningUrl(server.output, server.exited);
      const block = substitute(await shellBlock('README.md', '## Walk-through with curl'), {
        'http://127.0.0.1:3000': url,
      });
      const list = steps(block);
      assert.ok(list.length >= 4, 'the walk-through has its steps');
      const outputs = await run(list, { cwd: await temporaryDir(), env: {} });
      for (const [i, step] of list.entries()) assertShown(outputs[i]!, step.shown, step.command);
      // The last step shows no answer: every budget that applies, none spent.
      assert.ok(JSON.parse(outputs.at(-1)!).controls.length > 0);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    // The accounts' commands on the database the server made (the command line creates none).
    const accounts = await shellBlock('README.md', '## Accounts');
    await run(steps(accounts), { cwd: ROOT, env: { DATA_DIR: dataDir, PASSWORD_HASH_COST: '64' } });
  });

  it('README: a second instance on one host starts with its own ports and data beside the first', async () => {
    const [port1, metrics1, port2, metrics2] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const [data1, data2] = [await temporaryDir(), await temporaryDir()];
    const first = startServer({ PORT: String(port1), METRICS_PORT: String(metrics1), DATA_DIR: data1 });
    try {
      await listeningUrl(first.output, first.exited);
      const block = substitute(await shellBlock('README.md', '## Two instances on one host'), {
        'PORT=3001': `PORT=${port2}`,
        'METRICS_PORT=9465': `METRICS_PORT=${metrics2}`,
        'DATA_DIR=./data-2': `DATA_DIR=${data2}`,
      });
      const [start] = steps(block);
      const ready = `http://127.0.0.1:${port2}/readyz`;
      // Started in the background, then asked until it answers (a person waits for its log line).
      await run(
        [
          { command: `${start!.command} >/dev/null 2>&1 &`, shown: [] },
          {
            command: `for i in $(seq 240); do curl -fs ${ready} >/dev/null && break; sleep 0.25; done; curl -fs ${ready} || exit 1`,
            shown: [],
          },
        ],
        // The metrics listener's default stands for the first instance's port, as on a host with one.
        { cwd: ROOT, env: { METRICS_PORT: String(metrics1), PASSWORD_HASH_COST: '64' } },
      );
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });

  it('operations.md: two instances on PostgreSQL and Redis share one session and one bulk budget', async (t) => {
    const skip = (await skipUnless('postgres')) || (await skipUnless('redis'));
    if (skip) return t.skip(skip);
    const name = `docs_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    t.after(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    });
    const database = new URL(POSTGRES_URL);
    database.pathname = `/${name}`;
    const [port1, port2, metrics1, metrics2] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const block = substitute(await shellBlock('docs/operations.md', '## Several instances'), {
      'postgres://postgres@127.0.0.1:5432/taskportal': database.toString(),
      'redis://127.0.0.1:6379': REDIS_URL,
      '3001': String(port1),
      '3002': String(port2),
      'METRICS_PORT=9465': `METRICS_PORT=${metrics2}`,
      // The block runs in the repository (npm start); its cookie jar goes to a folder of the test's.
      ' jar ': ` ${join(await temporaryDir(), 'jar')} `,
    });
    const list = steps(block);
    const outputs = await run(list, {
      cwd: ROOT,
      // The first instance's metrics listener on a free port instead of the default; keys of its own.
      env: {
        METRICS_PORT: String(metrics1),
        REDIS_KEY_PREFIX: `docs:${name}:`,
        PASSWORD_HASH_COST: '64',
        LOG_LEVEL: 'warn',
      },
      timeoutMs: 180_000,
    });
    for (const [i, step] of list.entries()) assertShown(outputs[i]!, step.shown, step.command);
  });

  it('names only npm scripts that exist', async () => {
    const { scripts } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const file of [
      'README.md',
      'BENCHMARKS.md',
      'bench/README.md',
      'docs/architecture.md',
      'docs/operations.md',
      'docs/portal.md',
    ]) {
      const text = await readFile(join(ROOT, file), 'utf8');
      for (const [, written] of text.matchAll(/npm run ([\w:-]+)/g)) {
        const name = written!.replace(/:$/, ''); // a colon that ends the sentence's clause
        assert.ok(name in scripts, `${file} names npm run ${name}, which package.json does not have`);
      }
    }
  });
});
