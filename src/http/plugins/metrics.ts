// The service's Prometheus metrics: requests, 429s by code, limiter decision latency, the store's health.
// The app serves no route for them: `app.metrics` is scraped by the metrics listener (metrics-listener.ts).
import type { FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { HashGate } from '../../auth/hash-gate.ts';
import type { WorkChallenges } from '../../auth/work-challenges.ts';
import { type ShadowRefusalEvent, shadowRefusalChannel } from '../../rate-limit/engine.ts';
import type { StoreStack } from '../../rate-limit/stores/create-store.ts';
import { observeStore } from '../../rate-limit/stores/store-events.ts';
import { isDraining } from '../drain.ts';
import type { ReadinessState } from '../readiness.ts';
import { registerDatabaseMetrics } from './database-outage.ts';
import { registerLoginGateMetrics } from './login-gate-metrics.ts';
import { registerProvedWorkMetrics } from './proved-work-metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's metrics, for the listener that serves them apart from the public port. */
    metrics: MetricsSource;
  }
}

/** What a scrape needs: the registry's text and its content type (a prom-client Registry is one). */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface MetricsPluginOptions {
  /** The app's store stack: its labels, and the store whose events (store-events.ts) are counted. */
  readonly stack: StoreStack;
  /** The login hashing gate, whose queues, waits, checks and sheds are series of their own. */
  readonly loginGate: HashGate;
  /** Proved work's challenges, whose refused solutions are counted (contract §15). */
  readonly workChallenges: WorkChallenges;
  /** /readyz's look at the dependencies, which `instance_ready` shows (the same look, once a second at most). */
  readonly readiness: ReadinessState;
}

// From a memory decision (microseconds) to a Redis one that ran into the command timeout.
const DECISION_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
];

export const metricsPlugin = fp<MetricsPluginOptions>(
  async (app, { stack, loginGate, workChallenges, readiness }) => {
    // One registry per app: tests build many apps in one process, and their series must not mix.
    // No default process metrics: prom-client's collectors install observers that are never removed.
    const registry = new Registry();
    // The V8 heap in use, read at each scrape (no observer): a flood of any length holds it flat
    // (docs/rules.md#proved-work), and `npm run bench:flood` follows its trend from here.
    new Gauge({
      name: 'nodejs_heap_size_used_bytes',
      help: 'The V8 heap in use (process.memoryUsage().heapUsed), read at each scrape.',
      registers: [registry],
      collect() {
        this.set(process.memoryUsage().heapUsed);
      },
    });
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
    const shadowRefusals = new Counter({
      name: 'rate_limit_shadow_refusals_total',
      help: 'Requests a control in shadow mode (RATE_LIMIT_SHADOW) would have refused, by control.',
      labelNames: ['control'] as const,
      registers: [registry],
    });
    // No labels: every remote decision runs the same script on the same server, and prom-client's
    // labelled observe hashes a labels object to a string and looks it up on every request, about
    // twice the cost of the unlabelled one (measured: BENCHMARKS.md).
    const decisions = new Histogram({
      name: 'rate_limit_decision_seconds',
      help: 'Time the Redis store took to decide, from the call until it settled (memory decisions are not timed).',
      buckets: DECISION_BUCKETS,
      registers: [registry],
    });

    const redisErrors = new Counter({
      name: 'rate_limit_redis_errors_total',
      help: 'Redis operations of the rate limiter that failed or timed out.',
      registers: [registry],
    });
    // Read from the stack at scrape time: an instance that started without Redis is degraded
    // before this plugin could hear of it (create-store.ts).
    const storeLabels = { store: stack.backend.name, failure_mode: stack.backend.failureMode };
    new Gauge({
      name: 'rate_limit_store_degraded',
      help: '1 while Redis is unavailable and RATE_LIMIT_STORE_FAILURE applies, else 0.',
      labelNames: ['store', 'failure_mode'] as const,
      registers: [registry],
      collect() {
        this.set(storeLabels, stack.degraded() ? 1 : 0);
      },
    });
    // What /readyz would answer, as a series an alert can watch (deploy/prometheus/alerts.yml): the
    // same look at the dependencies, so a scrape also finds a Redis or a database that went away
    // while no request came, and costs no more than /readyz does.
    new Gauge({
      name: 'instance_ready',
      help: '1 while /readyz answers 200 (the database answers, the rate-limit store serves, not draining), else 0.',
      registers: [registry],
      async collect() {
        const ready = !isDraining(app.server) && !(await readiness.current()).fatal;
        this.set(ready ? 1 : 0);
      },
    });
    const stopGateMetrics = registerLoginGateMetrics(registry, loginGate);
    const stopWorkMetrics = registerProvedWorkMetrics(registry, loginGate, workChallenges);
    app.addHook('onClose', async () => {
      stopGateMetrics();
      stopWorkMetrics();
    });
    registerDatabaseMetrics(registry, app.databaseOutage);

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
        decision({ seconds }) {
          decisions.observe(seconds);
        },
        redisError() {
          redisErrors.inc();
        },
      });
    });
    app.addHook('onClose', async () => {
      shadowRefusalChannel.unsubscribe(onShadowRefusal);
      stopObserving?.();
      stopObserving = null;
    });

    // By the route's pattern, never the URL (ids and junk paths would make unbounded series);
    // requests that matched no route count as `unmatched`. The pattern is the route's own hook's
    // constant, as the rate limiter's plan is: read per request, `request.routeOptions` builds an
    // object of twelve fields and asks the router about version constraints.
    const count = (request: FastifyRequest, reply: FastifyReply, route: string) => {
      requests.inc({ method: request.method, route, status: reply.statusCode });
      if (request.rateLimitRefusal !== null) refusals.labels(request.rateLimitRefusal).inc();
    };
    app.addHook('onRoute', (route) => {
      const pattern = route.url;
      const counted: onResponseHookHandler = (request, reply, done) => {
        count(request, reply, pattern);
        done();
      };
      route.onResponse = [...[route.onResponse ?? []].flat(), counted];
    });
    app.addHook('onResponse', (request, reply, done) => {
      if (request.is404) count(request, reply, 'unmatched');
      done();
    });

    app.decorate('metrics', registry);
  },
  { name: 'metrics', dependencies: ['rate-limit', 'database-outage'] },
);
