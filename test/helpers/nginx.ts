// A real nginx for the tests that put instances behind it: its binary, the skip when it is missing, a config in a prefix of its own, its start and stop.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { servicesRequired } from './services.ts';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((candidate) =>
  existsSync(candidate),
);

/** A skip reason when nginx is not installed (a failure with REQUIRE_SERVICES=1), else false. */
export function skipUnlessNginx(): string | false {
  if (NGINX) return false;
  const message = 'nginx is not installed (apt-get install nginx)';
  if (servicesRequired) throw new Error(`${message}, and REQUIRE_SERVICES=1`);
  console.log(`# skipped: ${message} (set REQUIRE_SERVICES=1 to make this a failure)`);
  return `${message}; skipped`;
}

export interface Nginx {
  readonly process: ChildProcess;
  /** What nginx wrote on stderr so far (its start-up errors). */
  stderr(): string;
  /** The `[error]`-or-worse lines of its error log. */
  errors(): Promise<string[]>;
  /** Stops it gracefully (SIGQUIT) and removes its prefix. */
  stop(): Promise<void>;
}

/**
 * Starts nginx in a prefix of its own (logs, pid, temporary files) with `http` as the body of its
 * `http` block; the caller waits for its port as it sees fit.
 */
export async function startNginx(http: string, options: { workerConnections?: number } = {}): Promise<Nginx> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tp-nginx-'));
  await chmod(dir, 0o755); // nginx's workers may run as another user than its master
  const config = `
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections ${options.workerConnections ?? 1024}; }
http {
  access_log off;
  client_body_temp_path ${dir}/client-body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${http}
}
`;
  await writeFile(path.join(dir, 'nginx.conf'), config);
  const child = spawn(NGINX!, ['-c', path.join(dir, 'nginx.conf'), '-p', dir, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const errors = async () =>
    (await readFile(path.join(dir, 'error.log'), 'utf8').catch(() => ''))
      .split('\n')
      .filter((line) => /\[(error|crit|alert|emerg)\]/.test(line));
  return {
    process: child,
    stderr: () => stderr,
    errors,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGQUIT');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
