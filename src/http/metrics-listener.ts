// /metrics on a listener of its own (docs/rules.md#deployment), bound where the operator says.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERRORS, type ErrorCode, errorBody } from '../errors.ts';
import type { MetricsSource } from './plugins/metrics.ts';

export interface MetricsListener {
  /** Where it listens, e.g. `http://127.0.0.1:9464` (the port actually bound when asked for 0). */
  readonly url: string;
  /** Stops listening and ends its connections (a scraper keeps one alive between scrapes). */
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (and HEAD) from `source` on `host:port`; every other request is a 404.
 * A plain node:http server: one route, nothing of the public port's pipeline (sessions, limits,
 * request logs) applies to a scraper. `onError` hears of a scrape that failed (answered 500).
 */
export async function listenForMetrics(
  source: MetricsSource,
  address: { readonly host: string; readonly port: number },
  onError: (error: unknown) => void,
): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    void answer(source, request, response).catch((error: unknown) => {
      onError(error);
      if (!response.headersSent) send(response, 'INTERNAL_ERROR');
      else response.destroy();
    });
  });
  // A scraper that opens a connection and sends nothing must not hold it forever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(
  source: MetricsSource,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = (request.url ?? '').split('?', 1)[0];
  if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
    send(response, 'NOT_FOUND');
    return;
  }
  const text = await source.metrics();
  response.writeHead(200, {
    'content-type': source.contentType,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(request.method === 'HEAD' ? undefined : text);
}

function send(response: ServerResponse, code: ErrorCode): void {
  const body = JSON.stringify(errorBody(code));
  response.writeHead(ERRORS[code].status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(body);
}
