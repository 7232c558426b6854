// Drains an HTTP server on shutdown (docs/rules.md#faults): each request answered, connections closed.
import type { Server, ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';

/** Servers that are draining: /readyz answers 503 for them, so that load balancers stop sending. */
const draining = new WeakSet<Server>();

export function isDraining(server: Server): boolean {
  return draining.has(server);
}

export interface DrainOptions {
  /**
   * How long a keep-alive connection may stay idle before the drain closes it. A proxy that sends
   * a request on a connection at the moment the server closes it gets a reset, and nginx does not
   * retry a PATCH or a POST after a reset; so the drain leaves idle connections to the proxy, which
   * closes them itself once its upstream `keepalive_timeout` (shorter than this) runs out, or sends
   * one more request on them, answered with `Connection: close`.
   */
  readonly idleGraceMs: number;
  /** When to give up: connections still open then are destroyed. */
  readonly timeoutMs: number;
}

/** How often connections that went idle after the grace are looked for. */
const IDLE_SWEEP_MS = 250;

/**
 * Drains `server`: stops accepting connections, puts `Connection: close` on every answer not yet
 * written (the ones in flight and every one after), closes idle keep-alive connections after
 * `idleGraceMs`, and resolves once the last connection is closed (`drained`) or at `timeoutMs`
 * (`timed-out`, after destroying what is left).
 */
export function drain(server: Server, options: DrainOptions): Promise<'drained' | 'timed-out'> {
  draining.add(server);
  const closing = (_request: unknown, response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('connection', 'close');
  };
  // Ahead of the app's own listener, so that the header is there however early the answer goes.
  server.prependListener('request', closing);
  for (const socket of openSockets(server)) {
    // The answer this connection is writing or about to write (Node's own reference to it).
    const response = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (response && !response.headersSent) response.setHeader('connection', 'close');
  }
  return new Promise((resolve) => {
    let sweep: NodeJS.Timeout | undefined;
    const graceOver = setTimeout(() => {
      // Node closes only connections with no request started on them: never one a request is
      // arriving on.
      server.closeIdleConnections();
      sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    }, options.idleGraceMs);
    const giveUp = setTimeout(() => {
      server.closeAllConnections();
      finish('timed-out');
    }, options.timeoutMs);
    const finish = (outcome: 'drained' | 'timed-out') => {
      clearTimeout(graceOver);
      clearTimeout(giveUp);
      clearInterval(sweep);
      resolve(outcome);
    };
    // net.Server's close, not http.Server's: that one also closes idle connections at once, the
    // very race the grace avoids. The callback runs when the last connection is gone.
    net.Server.prototype.close.call(server, () => finish('drained'));
  });
}

/** The server's open connections, as tracked since it started listening. */
function openSockets(server: Server): Set<Socket> {
  return sockets.get(server) ?? new Set();
}

const sockets = new WeakMap<Server, Set<Socket>>();

/**
 * Starts tracking `server`'s connections (one listener per connection, nothing per request), so
 * that a drain can reach the answers in flight. Call before it listens.
 */
export function trackConnections(server: Server): void {
  const open = new Set<Socket>();
  sockets.set(server, open);
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
}
