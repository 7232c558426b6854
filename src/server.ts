// Starts the service: validated config, the app, listen, and a graceful stop on SIGTERM/SIGINT.
// Only the config is imported up front: libuv's pool is sized before anything can start it.
import { ConfigError, loadConfig } from './config.ts';

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
  const [{ buildApp }, { DEMO_ACCOUNTS, DEMO_PASSWORD }] = await Promise.all([
    import('./app.ts'),
    import('./db/seed.ts'),
  ]);
  const app = await buildApp(config);
  if (config.sessionSecretGenerated) {
    app.log.warn('SESSION_SECRET is not set: using a random one, so sessions end when this process does');
  }
  if (app.seededDemo) {
    console.log(
      `Seeded demo data. Accounts (password "${DEMO_PASSWORD}"):\n${DEMO_ACCOUNTS.map((a) => `  ${a.email.padEnd(20)} ${a.role}`).join('\n')}`,
    );
  }
  // Keep-alive sockets must outlive a load balancer's idle timeout, and headers may not dawdle.
  app.server.keepAliveTimeout = 65_000;
  app.server.headersTimeout = 66_000;
  app.server.requestTimeout = 30_000;
  await app.listen({ host: config.host, port: config.port });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000).unref();
    await app.close();
    clearTimeout(force);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
