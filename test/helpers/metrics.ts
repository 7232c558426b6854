// Scrapes an app's metrics the way Prometheus does: GET /metrics on a listener of its own (port 0).
import type { FastifyInstance } from 'fastify';
import { listenForMetrics } from '../../src/http/metrics-listener.ts';

/** The Prometheus text of `app`, fetched over HTTP from a metrics listener started for this scrape. */
export async function scrapeMetrics(app: FastifyInstance): Promise<string> {
  let failure: unknown = null;
  const listener = await listenForMetrics(app.metrics, { host: '127.0.0.1', port: 0 }, (error) => {
    failure = error;
  });
  try {
    const response = await fetch(`${listener.url}/metrics`);
    const text = await response.text();
    if (failure) throw failure;
    if (response.status !== 200) throw new Error(`the metrics listener answered ${response.status}: ${text}`);
    return text;
  } finally {
    await listener.close();
  }
}
