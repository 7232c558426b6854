// Which real services a test may use: present, absent (skip with a message), or required (CI).
import net from 'node:net';
import os from 'node:os';

/** CI sets REQUIRE_SERVICES=1: a missing service then fails the tests that need it. */
export const servicesRequired = process.env.REQUIRE_SERVICES === '1';

export const POSTGRES_URL = withDefaultUser(
  process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/test',
);
export const REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether the PostgreSQL tests run: when required, when DATABASE_URL is set, or when one answers. */
export const postgresWanted =
  servicesRequired || Boolean(process.env.DATABASE_URL || process.env.TEST_DATABASE_URL);

/** Like libpq, a URL without a user connects as the OS user (`pg` alone needs $USER, unset in some CI shells). */
function withDefaultUser(url: string): string {
  const parsed = new URL(url);
  if (parsed.username) return url;
  parsed.username = process.env.PGUSER || process.env.USER || os.userInfo().username;
  return parsed.toString();
}

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname || '127.0.0.1', port: Number(port) || defaultPort });
    // Close the probe at once: left open, it keeps the test process alive until the server drops it.
    const settle = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000);
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
    socket.once('timeout', () => settle(false));
  });
}

/**
 * `false` to run, or a skip message. When services are required and absent, throws, so the
 * test fails instead of skipping.
 */
export async function skipUnless(service: 'postgres' | 'redis'): Promise<false | string> {
  const url = service === 'postgres' ? POSTGRES_URL : REDIS_URL;
  const ok = await reachable(url, service === 'postgres' ? 5432 : 6379);
  if (ok) return false;
  const message = `${service} is not reachable at ${new URL(url).host}`;
  if (servicesRequired) throw new Error(`${message}, and REQUIRE_SERVICES=1`);
  console.log(`# skipped: ${message} (set REQUIRE_SERVICES=1 to make this a failure)`);
  return `${message}; skipped`;
}
