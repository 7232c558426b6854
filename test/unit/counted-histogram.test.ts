// CountedHistogram: what a scrape sees is what prom-client's own Histogram writes for the same observations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { CountedHistogram } from '../../src/http/plugins/counted-histogram.ts';

const BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];
const NAME = 'rate_limit_decision_seconds';
const HELP = 'Time the store took to decide.';

function both() {
  const ours = new Registry();
  const theirs = new Registry();
  const counted = new CountedHistogram({
    name: NAME,
    help: HELP,
    labelNames: ['control', 'operation'],
    buckets: BUCKETS,
    registers: [ours],
  });
  const histogram = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['control', 'operation'] as const,
    buckets: BUCKETS,
    registers: [theirs],
  });
  return { ours, theirs, counted, histogram };
}

const observation = fc.record({
  control: fc.constantFrom('api-authenticated', 'login-ip', 'task-bulk', 'a "quoted" \\ name'),
  operation: fc.constantFrom('consume', 'peek'),
  // Bounds themselves, values between them, and past the last one.
  seconds: fc.oneof(fc.constantFrom(...BUCKETS, 0, 1, 30), fc.double({ min: 0, max: 2, noNaN: true })),
});

describe('CountedHistogram', () => {
  it('scrapes byte for byte as prom-client’s Histogram does for the same observations', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
        const { ours, theirs, counted, histogram } = both();
        for (const { control, operation, seconds } of observations) {
          counted.observe(control, operation, seconds);
          histogram.labels(control, operation).observe(seconds);
        }
        assert.equal(await ours.metrics(), await theirs.metrics());
        const json = async (registry: Registry) =>
          JSON.parse(JSON.stringify(await registry.getMetricsAsJSON()));
        assert.deepEqual(await json(ours), await json(theirs));
      }),
      { numRuns: 200 },
    );
  });

  it('counts a value equal to a bound in that bound’s bucket', async () => {
    const { ours, counted } = both();
    counted.observe('login-ip', 'peek', 0.0005);
    const text = await ours.metrics();
    assert.match(
      text,
      /rate_limit_decision_seconds_bucket\{le="0\.00025",control="login-ip",operation="peek"\} 0/,
    );
    assert.match(
      text,
      /rate_limit_decision_seconds_bucket\{le="0\.0005",control="login-ip",operation="peek"\} 1/,
    );
    assert.match(
      text,
      /rate_limit_decision_seconds_bucket\{le="\+Inf",control="login-ip",operation="peek"\} 1/,
    );
  });

  it('drops non-finite values and forgets every series on reset', async () => {
    const { ours, counted } = both();
    counted.observe('login-ip', 'peek', Number.NaN);
    counted.observe('login-ip', 'peek', Number.POSITIVE_INFINITY);
    assert.doesNotMatch(await ours.metrics(), /_count/);
    counted.observe('login-ip', 'peek', 0.001);
    assert.match(await ours.metrics(), /_count\{control="login-ip",operation="peek"\} 1/);
    ours.resetMetrics();
    assert.doesNotMatch(await ours.metrics(), /_count/);
  });
});
