// The login gate's series in /metrics (docs/rules.md#the-login-gate): queues, waits, checks, sheds.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LoginWatch } from '../../login/login.ts';

/** From a free slot (no wait) to the shared lane's default bound of one second and past it. */
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Registers the gate's series on `registry` and listens to the login defence (its observer, and
 * its state at each scrape); returns the function that stops listening (call it when the app closes).
 */
export function registerLoginGateMetrics(registry: Registry, login: LoginWatch): () => void {
  new Gauge({
    name: 'login_gate_queue_depth',
    help: 'Login attempts waiting for a password check, by lane (known devices, shared).',
    labelNames: ['lane'] as const,
    registers: [registry],
    collect() {
      const { queued } = login.state();
      this.set({ lane: 'known' }, queued.known);
      this.set({ lane: 'shared' }, queued.shared);
    },
  });
  new Gauge({
    name: 'login_gate_held_answers',
    help: 'Shed login attempts whose 503 LOGIN_BUSY is held until LOGIN_QUEUE_MAX_WAIT has passed.',
    registers: [registry],
    collect() {
      this.set(login.state().held);
    },
  });
  new Gauge({
    name: 'login_gate_checks_running',
    help: 'Password checks running now (at most LOGIN_HASH_CONCURRENCY).',
    registers: [registry],
    collect() {
      this.set(login.state().running);
    },
  });
  const waits = new Histogram({
    name: 'login_gate_wait_seconds',
    help: 'How long login attempts waited for their password check, by lane.',
    labelNames: ['lane'] as const,
    buckets: WAIT_BUCKETS,
    registers: [registry],
  });
  const checks = new Counter({
    name: 'login_gate_checks_total',
    help: 'Password checks run at login (verifications, dummy hashes, rehashes), by lane.',
    labelNames: ['lane'] as const,
    registers: [registry],
  });
  const sheds = new Counter({
    name: 'login_gate_shed_total',
    help: 'Login attempts answered 503 LOGIN_BUSY before any hash: on arrival (expected-wait), after waiting too long (deadline), or pushed out by more proved work (displaced).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  // Labelled children made once: the observer runs per attempt.
  const waitOf = { known: waits.labels('known'), shared: waits.labels('shared') };
  const checksOf = { known: checks.labels('known'), shared: checks.labels('shared') };
  const shedOf = {
    'expected-wait': sheds.labels('expected-wait'),
    deadline: sheds.labels('deadline'),
    displaced: sheds.labels('displaced'),
  };
  return login.observe({
    granted: (lane, waitMs) => waitOf[lane].observe(waitMs / 1000),
    checked: (lane) => checksOf[lane].inc(),
    shed: (reason) => shedOf[reason].inc(),
  });
}
