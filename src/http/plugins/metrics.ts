// GET /metrics in Prometheus format: requests, 429s by code, limiter decision latency, the store's health.
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FailoverStore } from '../../rate-limit/stores/failover-store.ts';
import type { RateLimitStore } from '../../rate-limit/stores/store.ts';
import { TimedStore } from '../../rate-limit/stores/timed-store.ts';

export interface MetricsPluginOptions {
  /** The app's store; decisions are timed when it is a TimedStore, health read when it wraps a FailoverStore. */
  readonly store: RateLimitStore;
}

// From a memory decision (microseconds) to a Redis one that ran into the command timeout.
const DECISION_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
];

export const metricsPlugin = fp<MetricsPluginOptions>(
  async (app, { store }) => {
    // One registry per app: tests build many apps in one process, and their series must not mix.
    // No default process metrics: prom-client's collectors install observers that are never removed.
    const registry = new Registry();
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    });
    const refusals = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429, by error code.',
      labelNames: ['code'] as const,
      registers: [registry],
    });
    const decisions = new Histogram({
      name: 'rate_limit_decision_seconds',
      help: 'Time the Redis store took to decide, by control and operation (memory decisions are not timed).',
      labelNames: ['control', 'operation'] as const,
      buckets: DECISION_BUCKETS,
      registers: [registry],
    });

    // Label children are looked up once per label set, not hashed from an object per observation.
    const decisionSeries = new Map<string, Histogram.Internal<'control' | 'operation'>>();
    const timed = store instanceof TimedStore ? store : null;
    if (timed) {
      timed.onDecision = (rule, operation, seconds) => {
        const id = `${rule.name} ${operation}`;
        let series = decisionSeries.get(id);
        if (!series) {
          series = decisions.labels(rule.name, operation);
          decisionSeries.set(id, series);
        }
        series.observe(seconds);
      };
      app.addHook('onClose', async () => {
        timed.onDecision = null;
      });
    }
    const inner = timed?.inner ?? store;
    registerStoreHealth(registry, inner instanceof FailoverStore ? inner : null);

    const requestSeries = new Map<string, Counter.Internal>();
    app.addHook('onResponse', (request, reply, done) => {
      // The route's pattern, never the URL: ids and junk paths would make unbounded series.
      const route = request.routeOptions.url ?? 'unmatched';
      const id = `${request.method} ${route} ${reply.statusCode}`;
      let series = requestSeries.get(id);
      if (!series) {
        series = requests.labels(request.method, route, String(reply.statusCode));
        requestSeries.set(id, series);
      }
      series.inc();
      if (request.rateLimitRefusal !== null) refusals.labels(request.rateLimitRefusal).inc();
      done();
    });

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('content-type', registry.contentType).header('cache-control', 'no-store');
      return registry.metrics();
    });
  },
  { name: 'metrics', dependencies: ['rate-limit'] },
);

/** The store's fallback state and Redis failures, read from the store at scrape time. */
function registerStoreHealth(registry: Registry, failover: FailoverStore | null): void {
  new Gauge({
    name: 'rate_limit_store_degraded',
    help: '1 while Redis is unavailable and RATE_LIMIT_STORE_FAILURE applies, else 0.',
    labelNames: ['store', 'failure_mode'] as const,
    registers: [registry],
    collect() {
      const health = failover?.health();
      this.set(
        { store: failover ? 'redis' : 'memory', failure_mode: health?.mode ?? 'none' },
        health?.degraded ? 1 : 0,
      );
    },
  });
  let counted = 0;
  new Counter({
    name: 'rate_limit_redis_errors_total',
    help: 'Redis operations of the rate limiter that failed or timed out.',
    registers: [registry],
    collect() {
      const total = failover?.health().redisErrors ?? 0;
      this.inc(total - counted);
      counted = total;
    },
  });
}
