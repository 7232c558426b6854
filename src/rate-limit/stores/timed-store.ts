// Wraps the app's store to time each decision for the metrics, without adding a promise where there was none.
import type { MaybePromise, RateDecision, RateLimitStore, RateRule } from './store.ts';

export type DecisionTimer = (rule: RateRule, operation: 'consume' | 'peek', seconds: number) => void;

export class TimedStore implements RateLimitStore {
  /** Set by the metrics plugin; decisions are not timed until then. */
  onDecision: DecisionTimer | null = null;

  constructor(readonly inner: RateLimitStore) {}

  consume(rule: RateRule, key: string): MaybePromise<RateDecision> {
    return this.timed(rule, 'consume', () => this.inner.consume(rule, key));
  }

  peek(rule: RateRule, key: string): MaybePromise<RateDecision> {
    return this.timed(rule, 'peek', () => this.inner.peek(rule, key));
  }

  release(rule: RateRule, key: string, token: number): MaybePromise<void> {
    return this.inner.release(rule, key, token);
  }

  reset(rule: RateRule, key: string): MaybePromise<void> {
    return this.inner.reset(rule, key);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private timed(
    rule: RateRule,
    operation: 'consume' | 'peek',
    decide: () => MaybePromise<RateDecision>,
  ): MaybePromise<RateDecision> {
    const observe = this.onDecision;
    if (!observe) return decide();
    const started = performance.now();
    const decision = decide();
    if (!(decision instanceof Promise)) {
      observe(rule, operation, (performance.now() - started) / 1000);
      return decision;
    }
    // Failed decisions are timed too: a Redis timeout is exactly the latency worth seeing.
    const done = () => observe(rule, operation, (performance.now() - started) / 1000);
    return decision.finally(done);
  }
}
