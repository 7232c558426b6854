// Proved work's series in /metrics (docs/rules.md#proved-work): bits asked, work seen, solutions refused.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LoginWatch } from '../../login/login.ts';
import { WORK_REFUSALS } from '../../login/work-challenges.ts';

/** Proved bits, from none (most of a flood) to what a browser pays in a second or two and past it. */
const BITS_BUCKETS = [0, 1, 2, 4, 8, 12, 16, 18, 20, 22, 24, 28, 32];

/** Registers the series on `registry` and listens to the login defence; returns the function that stops listening. */
export function registerProvedWorkMetrics(registry: Registry, login: LoginWatch): () => void {
  new Gauge({
    name: 'login_work_bits_asked',
    help: 'The bits a LOGIN_BUSY challenge asks for now: 0 without pressure, else one more than the least work admitted lately.',
    registers: [registry],
    collect() {
      this.set(login.state().askedBits);
    },
  });
  const work = new Histogram({
    name: 'login_work_bits',
    help: 'Proved work (bits) of shared-lane login attempts, by outcome: granted a check (admitted) or answered LOGIN_BUSY (shed).',
    labelNames: ['outcome'] as const,
    buckets: BITS_BUCKETS,
    registers: [registry],
  });
  const refused = new Counter({
    name: 'login_work_refused_total',
    help: 'Solutions that counted as no work, by reason (forged or for another email, expired, no zero bit, reused, the store away).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of WORK_REFUSALS) refused.inc({ reason }, 0);
  const admitted = work.labels('admitted');
  const shed = work.labels('shed');
  return login.observe({
    granted: (lane, _waitMs, bits) => {
      if (lane === 'shared') admitted.observe(bits);
    },
    shed: (_reason, bits) => shed.observe(bits),
    workRefused: (reason) => refused.labels(reason).inc(),
  });
}
