// GET /metrics in Prometheus format: requests, 429s by code, limiter decision latency, the store's health.
import fp from 'fastify-plugin';
import { Counter, Gauge, Registry } from 'prom-client';
import { type ShadowRefusalEvent, shadowRefusalChannel } from '../../rate-limit/engine.ts';
import type { StoreStack } from '../../rate-limit/stores/create-store.ts';
import { observeStore } from '../../rate-limit/stores/store-events.ts';
import { CountedHistogram } from './counted-histogram.ts';

export interface MetricsPluginOptions {
  /** The app's store stack: its labels, and the store whose events (store-events.ts) are counted. */
  readonly stack: StoreStack;
}

// From a memory decision (microseconds) to a Redis one that ran into the command timeout.
const DECISION_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
];

export const metricsPlugin = fp<MetricsPluginOptions>(
  async (app, { stack }) => {
    // One registry per app: tests build many apps in one process, and their series must not mix.
    // No default process metrics: prom-client's collectors install observers that are never removed.
    const registry = new Registry();
    const answered = new AnsweredRequests();
    new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
      collect() {
        answered.report(this);
      },
    });
    const refusals = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429, by error code.',
      labelNames: ['code'] as const,
      registers: [registry],
    });
    const shadowRefusals = new Counter({
      name: 'rate_limit_shadow_refusals_total',
      help: 'Requests a control in shadow mode (RATE_LIMIT_SHADOW) would have refused, by control.',
      labelNames: ['control'] as const,
      registers: [registry],
    });
    const decisions = new CountedHistogram({
      name: 'rate_limit_decision_seconds',
      help: 'Time the Redis store took to decide, by control and operation (memory decisions are not timed).',
      labelNames: ['control', 'operation'],
      buckets: DECISION_BUCKETS,
      registers: [registry],
    });

    const health = registerStoreHealth(registry, stack.backend);

    // Listening from start to close only: the store publishes nothing while nobody listens.
    let stopObserving: (() => void) | null = null;
    // The engine publishes for every app in the process: count only this app's.
    const onShadowRefusal = (message: unknown) => {
      const event = message as ShadowRefusalEvent;
      if (event.engine === app.rateLimit) shadowRefusals.labels(event.control).inc();
    };
    app.addHook('onReady', async () => {
      shadowRefusalChannel.subscribe(onShadowRefusal);
      stopObserving = observeStore(stack.store, {
        decision({ control, operation, seconds }) {
          decisions.observe(control, operation, seconds);
        },
        storeState({ state }) {
          health.degraded = state === 'degraded';
        },
        redisError() {
          health.errors.inc();
        },
      });
    });
    app.addHook('onClose', async () => {
      shadowRefusalChannel.unsubscribe(onShadowRefusal);
      stopObserving?.();
      stopObserving = null;
    });

    // The route's pattern, never the URL (ids and junk paths would make unbounded series);
    // requests that matched no route count as `unmatched`.
    const unmatched = answered.forRoute('unmatched');
    app.addHook('onResponse', (request, reply, done) => {
      const counts = request.is404 ? unmatched : answered.forRoute(request.routeOptions.url!);
      counts.count(request.method, reply.statusCode);
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

/** The store's fallback state (set by its events, read at scrape time) and the count of Redis failures. */
function registerStoreHealth(registry: Registry, backend: StoreStack['backend']) {
  const health = {
    degraded: false,
    errors: new Counter({
      name: 'rate_limit_redis_errors_total',
      help: 'Redis operations of the rate limiter that failed or timed out.',
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'rate_limit_store_degraded',
    help: '1 while Redis is unavailable and RATE_LIMIT_STORE_FAILURE applies, else 0.',
    labelNames: ['store', 'failure_mode'] as const,
    registers: [registry],
    collect() {
      this.set({ store: backend.name, failure_mode: backend.failureMode }, health.degraded ? 1 : 0);
    },
  });
  return health;
}

interface Series {
  readonly labels: { readonly method: string; readonly route: string; readonly status: string };
  count: number;
  reported: number;
}

/** One route pattern's answers by method and status: two map lookups and an increment, no strings made. */
class RouteCounts {
  readonly series: Series[] = [];
  private readonly byMethod = new Map<string, Map<number, Series>>();
  private readonly route: string;

  constructor(route: string) {
    this.route = route;
  }

  count(method: string, status: number): void {
    let byStatus = this.byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      this.byMethod.set(method, byStatus);
    }
    const series = byStatus.get(status);
    if (series) {
      series.count++;
      return;
    }
    const created = { labels: { method, route: this.route, status: String(status) }, count: 1, reported: 0 };
    byStatus.set(status, created);
    this.series.push(created);
  }
}

/**
 * Answered requests, counted with a plain increment: prom-client's labelled `inc` hashes its
 * labels on every call, which a request should not pay for. The counts reach the Counter when it
 * is scraped.
 */
class AnsweredRequests {
  private readonly routes = new Map<string, RouteCounts>();

  /** The counts of a route pattern (a GET route and its HEAD share one). */
  forRoute(route: string): RouteCounts {
    let counts = this.routes.get(route);
    if (!counts) {
      counts = new RouteCounts(route);
      this.routes.set(route, counts);
    }
    return counts;
  }

  /** Adds to the counter what was counted since the last scrape. */
  report(counter: Counter<'method' | 'route' | 'status'>): void {
    for (const route of this.routes.values()) {
      for (const series of route.series) {
        if (series.count === series.reported) continue;
        counter.inc(series.labels, series.count - series.reported);
        series.reported = series.count;
      }
    }
  }
}
