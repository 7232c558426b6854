// Starts the service: validated config, the app, listen, and a graceful stop on SIGTERM/SIGINT.
// Only the config and the HTTP helpers are imported up front: libuv's pool is sized before anything can start it.
import type { FastifyInstance } from 'fastify';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { DataDirError } from './db/data-dir-lock.ts';
import { drain, trackConnections } from './http/drain.ts';
import { listenForMetrics } from './http/metrics-listener.ts';
import { REQUEST_TIMEOUT_MS } from './limits.ts';
import { lowerThreadPoolPriority } from './login/hash-priority.ts';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  // libuv reads UV_THREADPOOL_SIZE when its pool first starts, and nothing has used the pool yet
  // (module loading does not): the login gate's checks then leave threads for files and DNS.
  process.env.UV_THREADPOOL_SIZE = String(config.threadPoolSize);
  // Handlers from here on: a stop asked for during the start (migrations, the seed, the boot hash)
  // waits for the app to be built, then closes it (the embedded database cleanly) without listening.
  const stop = stopOnSignals(config.shutdownTimeoutMs);
  const [{ buildApp }, { DEMO_ACCOUNTS, DEMO_PASSWORD }] = await Promise.all([
    import('./app.ts'),
    import('./db/seed.ts'),
  ]);
  const app = await buildApp(config);
  if (stop.attach(app)) return;
  // The boot's dummy hash has started libuv's pool: its threads (the password checks) now run
  // below the event loop.
  lowerThreadPoolPriority();
  if (config.sessionSecretGenerated) {
    app.log.warn('SESSION_SECRET is not set: using a random one, so sessions end when this process does');
  }
  if (app.seededDemo) {
    console.log(
      `Seeded demo data. Accounts (password "${DEMO_PASSWORD}"):\n${DEMO_ACCOUNTS.map((a) => `  ${a.email.padEnd(20)} ${a.role}`).join('\n')}`,
    );
  }
  logAccountsAtStart(app, config);
  // Keep-alive sockets must outlive a load balancer's idle timeout, and headers may not dawdle.
  app.server.keepAliveTimeout = 65_000;
  app.server.headersTimeout = 66_000;
  app.server.requestTimeout = REQUEST_TIMEOUT_MS;
  trackConnections(app.server);
  try {
    await listening('METRICS_PORT', config.metrics, () => serveMetrics(app, config));
    await listening('PORT', config, () => app.listen({ host: config.host, port: config.port }));
  } catch (error) {
    if (!(error instanceof StartError)) throw error;
    console.error(error.message);
    await app.close(); // the embedded database, cleanly
    process.exit(1);
  }
}

/** A start that cannot go on, said in one line (no stack): a port that is taken. */
class StartError extends Error {}

/**
 * Runs `listen`, turning a port that cannot be had into a StartError naming the variable that
 * chose it: a second instance on one host meets this first on METRICS_PORT, a port it never chose.
 */
async function listening(
  variable: 'PORT' | 'METRICS_PORT',
  address: { readonly host: string; readonly port: number },
  listen: () => Promise<unknown>,
): Promise<void> {
  try {
    await listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw error;
    const why = code === 'EADDRINUSE' ? 'is taken by another process' : 'needs privileges this process lacks';
    const other = variable === 'METRICS_PORT' ? ', or METRICS_PORT=0 for no metrics listener' : '';
    throw new StartError(
      `${variable}=${address.port} cannot be used: ${address.host}:${address.port} ${why}; choose another ${variable}${other}`,
    );
  }
}

/** What is left of SHUTDOWN_TIMEOUT after the drain for closing the database, Redis and the logs. */
const CLOSE_ALLOWANCE_MS = 1000;

/**
 * SIGTERM/SIGINT: drain (docs/rules.md#faults; src/http/drain.ts), then close the app, and exit once done
 * or when SHUTDOWN_TIMEOUT has passed. Idle keep-alive connections are given half of it before
 * they are closed, for a proxy to stop using them first. A signal that arrives before the app
 * exists is kept: `attach` then closes the app at once and answers true (do not listen).
 */
function stopOnSignals(timeoutMs: number): { attach(app: FastifyInstance): boolean } {
  let app: FastifyInstance | null = null;
  let signal: string | null = null;
  let force: NodeJS.Timeout | undefined;
  const stop = async () => {
    if (!app) return; // during the start: `attach` stops once the app exists
    const allowance = Math.min(CLOSE_ALLOWANCE_MS, timeoutMs / 4);
    if (app.server.listening) {
      app.log.info({ signal }, 'shutting down: draining connections, finishing requests in flight');
      const outcome = await drain(app.server, {
        idleGraceMs: timeoutMs / 2,
        timeoutMs: timeoutMs - allowance,
      });
      if (outcome === 'timed-out') app.log.warn('drain timed out: connections still open were closed');
    }
    await app.close();
    clearTimeout(force);
    process.exit(0);
  };
  const onSignal = (name: string) => {
    if (signal) {
      const message = `${name} again: the stop goes on, bounded by SHUTDOWN_TIMEOUT (${timeoutMs} ms)`;
      if (app) app.log.info(message);
      else console.error(message);
      return;
    }
    signal = name;
    // Also bounds a start that never ends (a database that does not answer).
    force = setTimeout(() => {
      const message = `shutdown took longer than SHUTDOWN_TIMEOUT (${timeoutMs} ms); exiting`;
      if (app) app.log.error(message);
      else console.error(message);
      process.exit(1);
    }, timeoutMs).unref();
    void stop();
  };
  // Every signal is handled, not only the first: a second Ctrl-C (or SIGTERM) during the drain would
  // otherwise meet the default action and kill the process with answers still in flight.
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  return {
    attach(built) {
      app = built;
      if (!signal) return false;
      app.log.info({ signal }, 'stopping: the signal came during the start, so the service never listened');
      void stop();
      return true;
    },
  };
}

const ADD_ADMIN =
  "npm run users -- add --email you@example.com --name 'Your Name' --role admin (in the image: node src/cli/users.ts add ...)";

/** What an operator must know of the accounts after a start (docs/rules.md#running-it): demo passwords, the first admin. */
function logAccountsAtStart(app: FastifyInstance, config: Config): void {
  if (config.env === 'production' && config.seedDemo)
    app.log.warn(
      'SEED_DEMO=true under NODE_ENV=production: the demo accounts have a published password, and anyone may sign in as their admin; ' +
        'set SEED_DEMO=false and disable them (npm run users -- disable --email admin@example.com)',
    );
  switch (app.bootstrapAdmin) {
    case 'created':
      app.log.info(
        { email: config.bootstrapAdmin?.email },
        'created the first admin from BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD; both may now be removed from the environment',
      );
      break;
    case 'email-taken':
      app.log.warn(
        `no admin account may sign in, and BOOTSTRAP_ADMIN_EMAIL names an existing account, which was left as it is: enable or add an admin with ${ADD_ADMIN}`,
      );
      break;
    case 'no-admin':
      app.log.warn(
        `no admin account may sign in: set BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD (at least 12 characters) and start again, or run ${ADD_ADMIN}`,
      );
      break;
    case 'password-breached':
      app.log.error(
        `no admin account may sign in, and BOOTSTRAP_ADMIN_PASSWORD appears in known data breaches (PASSWORD_BREACH_API): no admin was created; choose another password and start again, or run ${ADD_ADMIN}`,
      );
      break;
    case 'password-check-unavailable':
      app.log.error(
        `no admin account may sign in, and the breached-password API (PASSWORD_BREACH_API, required) did not answer: no admin was created; start again once it answers, or run ${ADD_ADMIN}`,
      );
      break;
    case 'admin-exists':
      break;
  }
}

/** /metrics on METRICS_HOST:METRICS_PORT (none when the port is 0), closed when the app closes. */
async function serveMetrics(app: FastifyInstance, config: Config): Promise<void> {
  if (config.metrics.port === 0) return;
  const listener = await listenForMetrics(app.metrics, config.metrics, (error) =>
    app.log.error({ err: error }, 'metrics scrape failed'),
  );
  app.addHook('onClose', () => listener.close());
  app.log.info(`Metrics listening at ${listener.url}/metrics`);
}

main().catch((error) => {
  // DATA_DIR held by another process, or one it cannot use: one line, as for a taken port.
  console.error(error instanceof DataDirError ? error.message : error);
  process.exit(1);
});
