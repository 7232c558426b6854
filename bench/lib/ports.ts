// A free loopback port for a server the bench starts in another process.
import net from 'node:net';

/** The one port of our range that `fetch` refuses to connect to (the Fetch standard's "bad ports"). */
const FETCH_BLOCKED_PORT = 10_080;

/**
 * A loopback port nobody listens on now. Drawn at random below the kernel's ephemeral range
 * (32768+): a port the kernel hands out for `listen(0)` could go to one of the load generator's
 * own connections before the server we start binds it.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 20_000);
    if (port === FETCH_BLOCKED_PORT) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
