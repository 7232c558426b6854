// The machine's own rate of password checks, alone: what the flood's checks/s are judged against.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { hashPassword } from '../../src/auth/passwords.ts';
import { loadConfig } from '../../src/config.ts';
import { type FloodSettings, PASSWORD, START_ENV } from './kit.ts';

/**
 * Password checks per second on this machine alone: `threads` argon2id hashes in flight for `ms`,
 * each the service's own (src/auth/passwords.ts) at the cost the server's environment sets.
 */
export async function machineChecksPerSecond(
  threads: number,
  ms = 5000,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const { passwordHashCost } = loadConfig({ PASSWORD_HASH_COST: env.PASSWORD_HASH_COST });
  const one = () => hashPassword(PASSWORD, passwordHashCost);
  await one(); // warm up
  let done = 0;
  const started = performance.now();
  const end = started + ms;
  await Promise.all(
    Array.from({ length: threads }, async () => {
      while (performance.now() < end) {
        await one();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/** The machine's checks/s alone, in a process of its own with the server's environment. */
export async function checksAlone(settings: FloodSettings, threads: number): Promise<number> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), String(threads)], {
    env: { ...process.env, ...START_ENV, ...settings.serverEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`measuring the checks alone exited with ${code}`);
  return Number(out);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await machineChecksPerSecond(Number(process.argv[2])));
}
