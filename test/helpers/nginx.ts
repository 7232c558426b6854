// A real nginx on the shipped deploy/nginx.conf, addresses substituted, in a prefix of its own.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { servicesRequired } from './services.ts';

/** The file compose.yaml mounts into nginx, and the only nginx configuration the tests run. */
export const SHIPPED_NGINX_CONF = fileURLToPath(new URL('../../deploy/nginx.conf', import.meta.url));

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
  /** Resolves once `port` accepts connections; rejects with nginx's stderr if it exits or `ms` pass. */
  listening(port: number, ms?: number): Promise<void>;
  /** Stops it gracefully (SIGQUIT) and removes its prefix. */
  stop(): Promise<void>;
}

/** Where the shipped configuration's nginx listens and which instances it sends to. */
export interface NginxAddresses {
  /** What `listen` takes: `127.0.0.1:8081`. */
  readonly listen: string;
  /** The instances, `host:port` each, in place of the shipped `server` lines (their parameters kept). */
  readonly upstreams: readonly string[];
}

/** The upstream's `server` lines, one after another with the same parameters; and the `listen` line. */
const SERVER_LINES = /^( *)server +\S+( [^;\n]*)?;(?:\n\1server +\S+\2;)*$/gm;
const LISTEN_LINE = /^( *)listen +\S+;$/gm;

/**
 * deploy/nginx.conf with its upstream `server` lines and its `listen` replaced, and nothing else:
 * throws when the file no longer has exactly those lines to replace, so that no test runs a
 * configuration the file does not say.
 */
export function shippedNginxConfig(text: string, { listen, upstreams }: NginxAddresses): string {
  const blocks = [...text.matchAll(SERVER_LINES)];
  if (blocks.length !== 1 || [...text.matchAll(LISTEN_LINE)].length !== 1)
    throw new Error(`${SHIPPED_NGINX_CONF}: expected one run of upstream server lines and one listen line`);
  const [, indent, parameters = ''] = blocks[0]!;
  const servers = upstreams.map((upstream) => `${indent}server ${upstream}${parameters};`).join('\n');
  return text
    .replace(SERVER_LINES, () => servers)
    .replace(LISTEN_LINE, (_line, listenIndent: string) => `${listenIndent}listen ${listen};`);
}

/**
 * Starts nginx in a prefix of its own (logs, pid, temporary files) on the shipped configuration,
 * addresses substituted; the caller waits for its port as it sees fit.
 */
export async function startNginx(
  addresses: NginxAddresses,
  options: { workerConnections?: number } = {},
): Promise<Nginx> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tp-nginx-'));
  await chmod(dir, 0o755); // nginx's workers may run as another user than its master
  const shipped = shippedNginxConfig(await readFile(SHIPPED_NGINX_CONF, 'utf8'), addresses);
  // The main context of nginx's own nginx.conf (the official image's, Debian's), in this prefix.
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
${shipped}
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
    async listening(port, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr}`);
        const open = await new Promise<boolean>((resolve) => {
          const socket = net.connect({ host: '127.0.0.1', port }, () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('error', () => resolve(false));
        });
        if (open) return;
        await new Promise((resolve) => setTimeout(resolve, 50)); // nginx starts in another process: real time
      }
      throw new Error(`nginx did not listen on ${port} within ${ms} ms: ${stderr}`);
    },
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
