// Debian's promtool and prometheus on the shipped deploy/prometheus/ files, addresses substituted.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { servicesRequired } from './services.ts';

const run = promisify(execFile);

export const PROMETHEUS_DIR = fileURLToPath(new URL('../../deploy/prometheus/', import.meta.url));
/** The scrape configuration compose.yaml mounts, and the rules and their unit tests beside it. */
export const SHIPPED_PROMETHEUS_CONF = path.join(PROMETHEUS_DIR, 'prometheus.yml');
export const SHIPPED_ALERTS = path.join(PROMETHEUS_DIR, 'alerts.yml');
export const SHIPPED_ALERT_TESTS = path.join(PROMETHEUS_DIR, 'alerts.test.yml');

/** A skip reason when `binary` (promtool, prometheus) is missing (a failure with REQUIRE_SERVICES=1), else false. */
export function skipUnlessInstalled(binary: 'promtool' | 'prometheus'): string | false {
  if (spawnSync(binary, ['--version'], { stdio: 'ignore' }).status === 0) return false;
  const message = `${binary} is not installed (apt-get install prometheus)`;
  if (servicesRequired) throw new Error(`${message}, and REQUIRE_SERVICES=1`);
  console.log(`# skipped: ${message} (set REQUIRE_SERVICES=1 to make this a failure)`);
  return `${message}; skipped`;
}

/** Runs promtool; resolves with its output, rejects with it (stdout and stderr) when it fails. */
export async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: PROMETHEUS_DIR });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

/** The scrape targets' lines of the shipped file: one `- host:port` per instance of compose.yaml. */
const TARGET_LINES = /^( +)- api-\d+:\d+\n(?:\1- api-\d+:\d+\n)*/m;
/** The shipped intervals and timeout, each on a line of its own. */
const INTERVAL_LINES = /^( +)(scrape_interval|scrape_timeout|evaluation_interval): \S+$/gm;

/**
 * The shipped prometheus.yml with the targets replaced by `targets` (`host:port` each) and, when
 * `interval` is given, every interval and the scrape timeout set to it; nothing else changes.
 */
export async function substitutedConfig(targets: readonly string[], interval?: string): Promise<string> {
  const shipped = await readFile(SHIPPED_PROMETHEUS_CONF, 'utf8');
  const match = TARGET_LINES.exec(shipped);
  if (!match) throw new Error('the shipped prometheus.yml has no target lines to substitute');
  const indent = match[1]!;
  let text = shipped.replace(TARGET_LINES, targets.map((target) => `${indent}- ${target}\n`).join(''));
  if (interval) text = text.replace(INTERVAL_LINES, (_line, space, name) => `${space}${name}: ${interval}`);
  return text;
}

export interface Prometheus {
  readonly url: string;
  readonly process: ChildProcess;
  /** What prometheus logged so far. */
  output(): string;
  /** GET an API path (`/api/v1/targets`), answering its `data`. */
  api<T>(pathAndQuery: string): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Starts Debian's prometheus on `port` with `config` written into a directory of its own, beside a
 * link to the shipped alerts.yml (the config names it relatively), with its storage there too.
 */
export async function startPrometheus(config: string, port: number): Promise<Prometheus> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tp-prometheus-'));
  await writeFile(path.join(dir, 'prometheus.yml'), config);
  await symlink(SHIPPED_ALERTS, path.join(dir, 'alerts.yml'));
  const child = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  child.stdout!.on('data', (chunk) => (text += chunk));
  child.stderr!.on('data', (chunk) => (text += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus did not become ready:\n${text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    process: child,
    output: () => text,
    async api<T>(pathAndQuery: string): Promise<T> {
      const response = await fetch(`${url}${pathAndQuery}`);
      const body = (await response.json()) as { status: string; data: T };
      if (body.status !== 'success') throw new Error(`${pathAndQuery}: ${JSON.stringify(body)}`);
      return body.data;
    },
    stop,
  };
}
