// The server as `npm start` runs it (its environment settings and node flags included), in a process of its own.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START = (
  JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start;

/**
 * Starts `npm start`'s command, exec'd so that the child's pid is the server's, on free ports of
 * 127.0.0.1 (another server on this machine may hold the default METRICS_PORT), with `env` on top.
 */
export async function spawnNpmStart(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn('sh', ['-c', `exec ${START}`], {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`,
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { child, port };
}
