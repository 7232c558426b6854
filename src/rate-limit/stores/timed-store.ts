// Wraps the app's store to time the decisions that wait for Redis, for the metrics.
import type { MaybePromise, RateDecision, RateLimitStore, RateRule } from './store.ts';

export type DecisionTimer = (rule: RateRule, operation: 'consume' | 'peek', seconds: number) => void;

export class TimedStore implements RateLimitStore {
  /** Set by the metrics plugin; decisions are not timed until then. */
  onDecision: DecisionTimer | null = null;

  readonly inner: RateLimitStore;

  constructor(inner: RateLimitStore) {
    this.inner = inner;
  }

  consume(rule: RateRule, key: string): MaybePromise<RateDecision> {
    if (!this.onDecision) return this.inner.consume(rule, key);
    const started = performance.now();
    return this.observe(rule, 'consume', started, this.inner.consume(rule, key));
  }

  peek(rule: RateRule, key: string): MaybePromise<RateDecision> {
    if (!this.onDecision) return this.inner.peek(rule, key);
    const started = performance.now();
    return this.observe(rule, 'peek', started, this.inner.peek(rule, key));
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

  /** Records how long a decision that waited for Redis took, when it settles. */
  private observe(
    rule: RateRule,
    operation: 'consume' | 'peek',
    started: number,
    decision: MaybePromise<RateDecision>,
  ): MaybePromise<RateDecision> {
    // A decision made in memory takes well under a microsecond: timing it would cost more than it
    // does and say nothing. Only decisions that wait for Redis are timed.
    if (!(decision instanceof Promise)) return decision;
    // Failed decisions are timed too: a Redis timeout is exactly the latency worth seeing.
    return decision.finally(() => this.onDecision?.(rule, operation, (performance.now() - started) / 1000));
  }
}
