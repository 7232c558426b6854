// THE store-contract suite: every rate-limit store (memory, Redis, Redis Cluster) must pass it unchanged.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { WORK_SERIES_SLOTS } from '../../src/limits.ts';
import type { RateDecision, RateLimitStore, RateRule } from '../../src/rate-limit/stores/store.ts';

/**
 * Makes a fresh, empty store whose decisions follow `clock` (the suite moves it by hand) and that
 * keeps at most `marksMax` single-use marks per scope (the store's default when absent).
 */
export type StoreFactory = (
  clock: ManualClock,
  options?: { readonly marksMax?: number },
) => RateLimitStore | Promise<RateLimitStore>;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** A whole number of seconds, so that bucket boundaries (g = 1 s below) fall where the test expects. */
const START = 1_700_000_000_000;

// Rules are constants of the policy; a store may key its state by the rule object, so reuse them.
const log3: RateRule = { name: 'log-3', limit: 3, windowMs: MINUTE };
const log10: RateRule = { name: 'log-10', limit: 10, windowMs: MINUTE };
/** limit > 32: the bucket shape, 16 buckets of g = 1 s. */
const buckets40: RateRule = { name: 'buckets-40', limit: 40, windowMs: 16 * SECOND };

type Brief = [allowed: boolean, remaining: number, resetMs: number];
const brief = (d: RateDecision): Brief => [d.allowed, d.remaining, d.resetMs];

export function storeContract(makeStore: StoreFactory): void {
  async function setup(t: TestContext, options?: { readonly marksMax?: number }) {
    const clock = new ManualClock(START);
    const store = await makeStore(clock, options);
    t.after(() => store.close());
    const consume = async (rule: RateRule, key = 'k') => store.consume(rule, key);
    const peek = async (rule: RateRule, key = 'k') => store.peek(rule, key);
    const consumeN = async (rule: RateRule, n: number, key = 'k') => {
      const out: RateDecision[] = [];
      for (let i = 0; i < n; i++) out.push(await consume(rule, key));
      return out;
    };
    return { clock, store, consume, peek, consumeN };
  }

  describe('consume: atomic check-and-consume', () => {
    it('admits the budget counting remaining down, then refuses with the exact wait', async (t) => {
      const { clock, consume, consumeN } = await setup(t);
      const admitted = await consumeN(log3, 3);
      assert.deepEqual(admitted.map(brief), [
        [true, 2, 0],
        [true, 1, 0],
        [true, 0, MINUTE],
      ]);
      for (const decision of admitted) assert.equal(typeof decision.token, 'number');
      for (const decision of admitted) assert.equal(decision.limit, 3);
      clock.advance(10 * SECOND);
      const refused = await consume(log3);
      assert.deepEqual(brief(refused), [false, 0, 50 * SECOND]);
      assert.equal(refused.token, undefined, 'a refusal records nothing, so it has no token');
      clock.advance(50 * SECOND - 1);
      assert.deepEqual(brief(await consume(log3)), [false, 0, 1]);
      clock.advance(1);
      assert.deepEqual(brief(await consume(log3)), [true, 2, 0]);
    });

    it('log shape (limit ≤ 32): remaining and resetMs are exact to the millisecond', async (t) => {
      const { clock, consume } = await setup(t);
      assert.deepEqual(brief(await consume(log3)), [true, 2, 0]);
      clock.advance(10 * SECOND);
      assert.deepEqual(brief(await consume(log3)), [true, 1, 0]);
      clock.advance(10 * SECOND);
      // Full now: the next admission is when the first one (40 s ago… 20 s ago) leaves the window.
      assert.deepEqual(brief(await consume(log3)), [true, 0, 40 * SECOND]);
      clock.advance(10 * SECOND);
      assert.deepEqual(brief(await consume(log3)), [false, 0, 30 * SECOND]);
      clock.advance(30 * SECOND);
      // The first admission left exactly now; the one at +10 s is the next to leave.
      assert.deepEqual(brief(await consume(log3)), [true, 0, 10 * SECOND]);
    });

    it('bucket shape (limit > 32): counts 1-second buckets, resetMs exact for that shape', async (t) => {
      const { clock, consume, consumeN, peek } = await setup(t);
      const first = await consumeN(buckets40, 20);
      assert.deepEqual(brief(first.at(-1)!), [true, 20, 0]);
      clock.advance(8 * SECOND);
      const second = await consumeN(buckets40, 20);
      // The bucket of the first 20 (count in full until its end + the window) frees them at +17 s.
      assert.deepEqual(brief(second.at(-1)!), [true, 0, 9 * SECOND]);
      assert.deepEqual(brief(await consume(buckets40)), [false, 0, 9 * SECOND]);
      clock.advance(9 * SECOND - 1);
      assert.deepEqual(brief(await peek(buckets40)), [false, 0, 1]);
      clock.advance(1);
      assert.deepEqual(brief(await peek(buckets40)), [true, 20, 0]);
      assert.deepEqual(brief(await consume(buckets40)), [true, 19, 0]);
    });

    it('bucket shape: a bucket is counted in full until its end plus the window', async (t) => {
      const { clock, consume, consumeN } = await setup(t);
      clock.advance(500); // mid-bucket: the 40 still free only when their whole bucket has left
      assert.deepEqual(brief((await consumeN(buckets40, 40)).at(-1)!), [true, 0, 16_500]);
      clock.advance(16_499);
      assert.deepEqual(brief(await consume(buckets40)), [false, 0, 1]);
      clock.advance(1);
      assert.deepEqual(brief(await consume(buckets40)), [true, 39, 0]);
    });
  });

  describe('never more than the budget in any window', () => {
    it('refuses a burst across what a fixed window would call a boundary', async (t) => {
      const { clock, consume, consumeN } = await setup(t);
      clock.set(Math.ceil(START / MINUTE) * MINUTE + MINUTE - SECOND); // one second before a minute ends
      assert.ok((await consumeN(log10, 10)).every((d) => d.allowed));
      clock.advance(2 * SECOND); // a new "minute" has begun
      assert.equal((await consume(log10)).allowed, false);
      clock.advance(MINUTE - 2 * SECOND - 1);
      assert.equal((await consume(log10)).allowed, false);
      clock.advance(1);
      assert.equal((await consume(log10)).allowed, true);
    });

    for (const rule of [log10, buckets40]) {
      it(`${rule.name}: at random times, no interval of the window admits more than ${rule.limit}`, async (t) => {
        const { clock, consume } = await setup(t);
        const random = seeded(rule.limit);
        const admittedAt: number[] = [];
        let refused = 0;
        for (let step = 0; step < 150; step++) {
          clock.advance(Math.floor(random() * random() * (rule.windowMs / 4)));
          const burst = Math.floor(random() * (rule.limit / 2));
          for (let i = 0; i < burst; i++) {
            if ((await consume(rule)).allowed) admittedAt.push(clock.now());
            else refused++;
          }
        }
        assert.ok(admittedAt.length > rule.limit * 2, 'the sequence spans several windows');
        // The bursts come faster than the budget allows: without refusals the check below proves nothing.
        assert.ok(refused > rule.limit, `only ${refused} refusals: the sequence never pressed on the limit`);
        for (let i = 0; i < admittedAt.length; i++) {
          const inWindow = admittedAt.filter(
            (t0) => t0 > admittedAt[i]! - rule.windowMs && t0 <= admittedAt[i]!,
          );
          assert.ok(inWindow.length <= rule.limit, `${inWindow.length} admitted in one window`);
        }
      });
    }
  });

  describe('peek', () => {
    it('spends nothing, counts this request in remaining, and refuses like consume', async (t) => {
      const { clock, consume, peek, consumeN } = await setup(t);
      for (let i = 0; i < 5; i++) {
        const look = await peek(log3);
        assert.deepEqual(brief(look), [true, 3, 0]);
        assert.equal(look.token, undefined);
      }
      assert.ok((await consumeN(log3, 3)).every((d) => d.allowed));
      clock.advance(SECOND);
      assert.deepEqual(brief(await peek(log3)), brief(await consume(log3)));
      assert.deepEqual(brief(await peek(log3)), [false, 0, MINUTE - SECOND]);
      assert.deepEqual(brief(await peek(buckets40)), [true, 40, 0]);
    });
  });

  describe('release', () => {
    it('takes back exactly the admission of its token, once', async (t) => {
      const { clock, store, consume } = await setup(t);
      const a = await consume(log3);
      clock.advance(10 * SECOND);
      const b = await consume(log3);
      clock.advance(10 * SECOND);
      await consume(log3);
      await store.release(log3, 'k', b.token!);
      // Had `a` been released instead, the wait would be counted from b (+10 s): 50 s.
      assert.deepEqual(brief(await consume(log3)), [true, 0, 40 * SECOND]);
      await store.release(log3, 'k', b.token!); // already taken back: nothing more to give
      assert.equal((await consume(log3)).allowed, false);
      await store.release(log3, 'k', a.token! - 1); // no admission at that time
      assert.equal((await consume(log3)).allowed, false);
      await store.release(log3, 'other', a.token!); // nor under another key
      assert.equal((await consume(log3)).allowed, false);
    });

    it('bucket shape: gives back one unit while its bucket is held, nothing once it has left', async (t) => {
      const { clock, store, consume, consumeN, peek } = await setup(t);
      const [first] = await consumeN(buckets40, 40);
      await store.release(buckets40, 'k', first!.token!);
      assert.deepEqual(brief(await peek(buckets40)), [true, 1, 0]);
      assert.deepEqual(brief(await consume(buckets40)), [true, 0, 17 * SECOND]);
      clock.advance(20 * SECOND);
      await consume(buckets40);
      await store.release(buckets40, 'k', first!.token!); // its bucket left the window long ago
      assert.deepEqual(brief(await peek(buckets40)), [true, 39, 0]);
    });

    it('bucket shape: a token a whole ring of buckets old is gone; the bucket now in its slot keeps its count', async (t) => {
      const { clock, store, consume, peek } = await setup(t);
      const first = await consume(buckets40);
      clock.advance(8 * SECOND);
      await consume(buckets40); // keeps the key's state from expiring
      clock.advance(9 * SECOND); // 17 buckets on: the current bucket has the ring slot of the first
      await consume(buckets40);
      await store.release(buckets40, 'k', first.token!);
      // Buckets 1…17 of the window hold the admissions at 8 s and 17 s; none was taken back.
      assert.deepEqual(brief(await peek(buckets40)), [true, 38, 0]);
    });

    it('ignores a token from before the key was reset, even in the bucket it shares', async (t) => {
      const { clock, store, consumeN, peek } = await setup(t);
      const [old] = await consumeN(buckets40, 1);
      await store.reset(buckets40, 'k');
      clock.advance(1); // the same 1-second bucket: only the reset tells the old token apart
      await consumeN(buckets40, 40);
      await store.release(buckets40, 'k', old!.token!);
      assert.deepEqual(brief(await peek(buckets40)), [false, 0, 17 * SECOND - 1]);
    });

    it('is a no-op for a key that has no state', async (t) => {
      const { store, peek } = await setup(t);
      await store.release(log3, 'never-seen', START);
      await store.release(buckets40, 'never-seen', START);
      assert.deepEqual(brief(await peek(log3, 'never-seen')), [true, 3, 0]);
    });
  });

  describe('reset', () => {
    it('forgets the key, and only that key', async (t) => {
      const { store, consume, consumeN, peek } = await setup(t);
      await consumeN(log3, 3, 'a');
      await consumeN(log3, 3, 'b');
      await consumeN(buckets40, 40, 'a');
      await store.reset(log3, 'a');
      await store.reset(buckets40, 'a');
      await store.reset(log3, 'never-seen');
      assert.deepEqual(brief(await consume(log3, 'a')), [true, 2, 0]);
      assert.deepEqual(brief(await peek(buckets40, 'a')), [true, 40, 0]);
      assert.equal((await consume(log3, 'b')).allowed, false);
    });
  });

  describe('keys', () => {
    it('rules with different names never share a key', async (t) => {
      const { consumeN, peek } = await setup(t);
      const twin: RateRule = { name: 'log-3-twin', limit: 3, windowMs: MINUTE };
      await consumeN(log3, 3, 'same');
      assert.deepEqual(brief(await peek(twin, 'same')), [true, 3, 0]);
    });

    it('keys are taken verbatim: braces, colons and non-ASCII never make two keys one', async (t) => {
      const { consumeN, peek } = await setup(t);
      const keys = [
        'a',
        'a}',
        '{a}',
        'a:b',
        'a:b}:c',
        'ünïcødé@example.com',
        '198.51.100.7',
        '2001:db8::/64',
      ];
      for (const key of keys) {
        await consumeN(log3, 1, key);
        assert.deepEqual(brief(await peek(log3, key)), [true, 2, 0], key);
      }
    });
  });

  describe('expiry', () => {
    it('a key is as new once its window (log) or window plus a bucket (buckets) has passed', async (t) => {
      const { clock, consume, consumeN, peek } = await setup(t);
      await consumeN(log3, 3);
      await consumeN(buckets40, 40);
      clock.advance(MINUTE);
      assert.deepEqual(brief(await peek(log3)), [true, 3, 0]);
      assert.deepEqual(brief(await consume(log3)), [true, 2, 0]);
      assert.deepEqual(brief(await peek(buckets40)), [true, 40, 0]);
      assert.deepEqual(brief(await consume(buckets40)), [true, 39, 0]);
    });
  });

  describe('concurrency', () => {
    for (const [rule, requests] of [
      [log10, 50],
      [buckets40, 120],
    ] as const) {
      it(`${requests} parallel consumes of one ${rule.name} key admit exactly ${rule.limit}`, async (t) => {
        const { store } = await setup(t);
        const decisions = await Promise.all(
          Array.from({ length: requests }, () => store.consume(rule, 'hot')),
        );
        assert.equal(decisions.filter((d) => d.allowed).length, rule.limit);
        const remaining = decisions.filter((d) => d.allowed).map((d) => d.remaining);
        assert.deepEqual(
          remaining.sort((x, y) => y - x),
          Array.from({ length: rule.limit }, (_, i) => rule.limit - 1 - i),
          'each admission saw the one before it',
        );
      });
    }
  });

  describe('claimOnce: a slot of a series, once', () => {
    it('grants the first claim of a slot and refuses every later one while its series is kept', async (t) => {
      const { clock, store } = await setup(t);
      assert.equal(await store.claimOnce('work', 'series-1', 0, MINUTE), true);
      assert.equal(await store.claimOnce('work', 'series-1', 0, MINUTE), false);
      clock.advance(MINUTE - 1);
      assert.equal(await store.claimOnce('work', 'series-1', 0, MINUTE), false);
    });

    it('keeps scopes, series, slots and the budgets apart', async (t) => {
      const { store } = await setup(t);
      assert.equal(await store.claimOnce('work', 's', 7, MINUTE), true);
      assert.equal(await store.claimOnce('work', 's', 8, MINUTE), true);
      assert.equal(await store.claimOnce('work', 's', 100_000, MINUTE), true, 'a high slot');
      assert.equal(await store.claimOnce('work', 'other', 7, MINUTE), true);
      assert.equal(await store.claimOnce(log3.name, 's', 7, MINUTE), true, 'another scope');
      await store.consume(log3, 's');
      await store.reset(log3, 's');
      assert.equal(await store.claimOnce('work', 's', 7, MINUTE), false, 'a reset of a rule leaves claims');
      assert.equal(await store.claimOnce('work', 's', 100_000, MINUTE), false);
      assert.equal((await store.peek(log3, 'k')).remaining, 3, 'a claim spends no budget');
    });

    it('refuses a slot no series has (negative, fractional, past the last)', async (t) => {
      const { store } = await setup(t);
      for (const slot of [-1, 0.5, WORK_SERIES_SLOTS])
        assert.equal(await store.claimOnce('work', 's', slot, MINUTE), false, String(slot));
    });

    it('of 50 parallel claims of one slot exactly one is granted, and claims of 50 slots all are', async (t) => {
      const { store } = await setup(t);
      const one = await Promise.all(
        Array.from({ length: 50 }, () => store.claimOnce('work', 'hot', 3, MINUTE)),
      );
      assert.equal(one.filter(Boolean).length, 1);
      const many = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.claimOnce('work', 'hot', 100 + i, MINUTE)),
      );
      assert.equal(many.filter(Boolean).length, 50);
    });
  });

  describe('single-use marks', () => {
    it('a mark is taken once, then is gone', async (t) => {
      const { store } = await setup(t);
      assert.equal(await store.putOnce('challenge', 'browser', 'm1', MINUTE), 0);
      assert.equal(await store.takeOnce('challenge', 'browser', 'm1'), true);
      assert.equal(await store.takeOnce('challenge', 'browser', 'm1'), false);
    });

    it('a mark never put, or put under another scope or holder, is not there; another mark leaves it', async (t) => {
      const { store } = await setup(t);
      await store.putOnce('challenge', 'browser', 'm1', MINUTE);
      assert.equal(await store.takeOnce('challenge', 'browser', 'm2'), false);
      assert.equal(await store.takeOnce('challenge', 'other', 'm1'), false);
      assert.equal(await store.takeOnce('other', 'browser', 'm1'), false);
      assert.equal(await store.takeOnce('challenge', 'browser', 'm1'), true);
    });

    it('a holder holds one mark: a new one replaces its previous one, and leaves other holders’ alone', async (t) => {
      const { store } = await setup(t);
      await store.putOnce('challenge', 'browser', 'first', MINUTE);
      await store.putOnce('challenge', 'neighbour', 'first', MINUTE);
      await store.putOnce('challenge', 'browser', 'second', MINUTE);
      assert.equal(await store.takeOnce('challenge', 'browser', 'first'), false, 'replaced');
      assert.equal(await store.takeOnce('challenge', 'browser', 'second'), true);
      assert.equal(await store.takeOnce('challenge', 'neighbour', 'first'), true);
    });

    it('a mark lasts its time to the millisecond, and an expired one is not taken', async (t) => {
      const { clock, store } = await setup(t);
      await store.putOnce('challenge', 'early', 'm', MINUTE);
      await store.putOnce('challenge', 'late', 'm', MINUTE);
      clock.advance(MINUTE - 1);
      assert.equal(await store.takeOnce('challenge', 'early', 'm'), true);
      clock.advance(1);
      assert.equal(await store.takeOnce('challenge', 'late', 'm'), false);
    });

    it('putting a mark again restarts its time', async (t) => {
      const { clock, store } = await setup(t);
      await store.putOnce('challenge', 'browser', 'm', MINUTE);
      clock.advance(MINUTE - 10);
      await store.putOnce('challenge', 'browser', 'm', MINUTE);
      clock.advance(30 * SECOND);
      assert.equal(await store.takeOnce('challenge', 'browser', 'm'), true);
    });

    it('a full scope refuses a newcomer with the wait until its first mark ends, and drops no live mark', async (t) => {
      const { clock, store } = await setup(t, { marksMax: 3 });
      for (const holder of ['a', 'b', 'c']) {
        assert.equal(await store.putOnce('challenge', holder, `m-${holder}`, MINUTE), 0);
        clock.advance(SECOND);
      }
      assert.equal(await store.putOnce('challenge', 'd', 'm-d', MINUTE), MINUTE - 3 * SECOND, 'a ends first');
      assert.equal(await store.putOnce('other', 'd', 'm-d', MINUTE), 0, 'another scope has its own room');
      assert.equal(await store.putOnce('challenge', 'b', 'm-b2', MINUTE), 0, 'a holder replaces its own');
      assert.equal(await store.takeOnce('challenge', 'd', 'm-d'), false);
      assert.equal(await store.takeOnce('challenge', 'a', 'm-a'), true, 'no live mark was dropped');
      assert.equal(await store.putOnce('challenge', 'd', 'm-d', MINUTE), 0, 'room once one is taken');
      assert.notEqual(await store.putOnce('challenge', 'e', 'm-e', MINUTE), 0);
      clock.advance(MINUTE);
      assert.equal(await store.putOnce('challenge', 'e', 'm-e', MINUTE), 0, 'room once marks end');
      assert.equal(await store.takeOnce('challenge', 'e', 'm-e'), true);
    });

    it('of 50 parallel takes of one mark exactly one succeeds', async (t) => {
      const { store } = await setup(t);
      await store.putOnce('challenge', 'browser', 'hot', MINUTE);
      const taken = await Promise.all(
        Array.from({ length: 50 }, () => store.takeOnce('challenge', 'browser', 'hot')),
      );
      assert.equal(taken.filter(Boolean).length, 1);
    });

    it('of 50 parallel newcomers to a scope with room for 10, exactly 10 are kept', async (t) => {
      const { store } = await setup(t, { marksMax: 10 });
      const waits = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.putOnce('challenge', `browser-${i}`, 'm', MINUTE)),
      );
      assert.equal(waits.filter((wait) => wait === 0).length, 10);
    });

    it('marks live apart from the budgets: a reset or a consume under the same key leaves them', async (t) => {
      const { store } = await setup(t);
      await store.putOnce(log3.name, 'k', 'k', MINUTE);
      await store.consume(log3, 'k');
      await store.reset(log3, 'k');
      assert.equal(await store.takeOnce(log3.name, 'k', 'k'), true);
      assert.equal((await store.peek(log3, 'k')).remaining, 3);
    });
  });
}

/** A small deterministic PRNG (mulberry32): the random sequences are the same on every run. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}
