// The Redis store's write batch and shared deadline, on a private redis-server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import type { RedisStore } from '../../src/rate-limit/stores/redis-store.ts';
import {
  type RateDecision,
  type RateRule,
  StoreUnavailableError,
} from '../../src/rate-limit/stores/store.ts';
import { openRedisStore } from '../helpers/redis.ts';
import { RedisServer, skipUnlessRedisBinaries } from '../helpers/redis-server.ts';

const skip = skipUnlessRedisBinaries();
const MINUTE = 60_000;
const rule: RateRule = { name: 'pipelining', limit: 3, windowMs: MINUTE };
/**
 * Socket reads Redis may count for one turn's batch plus the INFO that reads the counter: one for
 * the batch (two if the kernel splits it), one for the INFO. Without batching, 50 decisions
 * measured from 10 to 34 reads here; how many depends on when Redis wakes up, so the socket's own
 * state below is what pins the batch down.
 */
const BATCH_READS = 3;

const brief = (d: RateDecision) => [d.allowed, d.remaining];

/** The socket of a single server's client, as it is now (a reconnection makes a new one). */
const socketOf = (store: RedisStore) => (store.client as Redis).stream;

/** Waits for the end of this turn: setImmediate callbacks run in order, the batch's first. */
const endOfTurn = () => new Promise<void>(setImmediate);

/** What the server counted since the last CONFIG RESETSTAT (the INFO that reads it included). */
async function serverStats(store: RedisStore) {
  const info = await store.client.info('everything');
  const field = (pattern: RegExp) => Number(pattern.exec(info)?.[1] ?? 0);
  return {
    reads: field(/^total_reads_processed:(\d+)/m),
    evalsha: field(/^cmdstat_evalsha:calls=(\d+)/m),
    ping: field(/^cmdstat_ping:calls=(\d+)/m),
  };
}

async function resetStats(store: RedisStore): Promise<void> {
  await store.client.config('RESETSTAT');
}

describe('RedisStore write batch', { skip, timeout: 30_000 }, () => {
  // A private server: its counters see this file's commands and nobody else's.
  let server: RedisServer;
  let store: RedisStore;
  before(async () => {
    server = await RedisServer.start();
    store = await openRedisStore({ url: server.url });
    await store.consume(rule, 'warm'); // the script is loaded (NOSCRIPT, then EVAL) before counting
  });
  after(async () => {
    await store?.close();
    await server?.stop();
  });

  it('holds the writes of a turn in the socket until the turn ends, then lets them all go', async () => {
    const socket = socketOf(store);
    assert.equal(socket.writableCorked, 0, 'nothing held between turns');
    const pending = [store.consume(rule, 'held-a'), store.peek(rule, 'held-b')];
    assert.equal(socket.writableCorked, 1, 'held once, however many commands');
    const held = socket.writableLength;
    assert.ok(held > 0, 'the EVALSHAs wait in the socket');
    pending.push(store.consume(rule, 'held-c'));
    assert.ok(socket.writableLength > held, 'a later command of the turn joins them');
    await endOfTurn();
    assert.equal(socket.writableCorked, 0, 'let go at the end of the turn');
    assert.deepEqual((await Promise.all(pending)).map(brief), [
      [true, 2],
      [true, 3],
      [true, 2],
    ]);
  });

  it('sends the 50 decisions of one turn in one write: Redis reads them at once and answers each', async () => {
    await resetStats(store);
    const pending: Promise<RateDecision>[] = [];
    for (let i = 0; i < 50; i++) pending.push(store.consume(rule, `one-turn-${i}`));
    assert.equal(socketOf(store).writableCorked, 1);
    const decisions = await Promise.all(pending);
    const stats = await serverStats(store);
    assert.equal(stats.evalsha, 50, 'each decision is still its own EVALSHA');
    assert.ok(stats.reads <= BATCH_READS, `${stats.reads} socket reads for one turn's 50 decisions`);
    for (const [i, decision] of decisions.entries()) {
      assert.deepEqual(brief(decision), [true, 2], `one-turn-${i}`);
      assert.equal(decision.limit, 3);
      assert.equal(typeof decision.token, 'number');
    }
  });

  it('keeps the order of one turn’s decisions on one key: the budget counts down, then refuses', async () => {
    await resetStats(store);
    const pending = [
      store.peek(rule, 'ordered'),
      ...Array.from({ length: 5 }, () => store.consume(rule, 'ordered')),
      store.peek(rule, 'ordered'),
    ];
    const decisions = await Promise.all(pending);
    const stats = await serverStats(store);
    assert.deepEqual(decisions.map(brief), [
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
      [false, 0],
    ]);
    assert.ok(
      decisions[4]!.resetMs > 0 && decisions[4]!.resetMs <= MINUTE,
      'a refusal says how long to wait',
    );
    assert.ok(stats.reads <= BATCH_READS, `${stats.reads} socket reads`);
  });

  it('takes the other commands of the turn along (a PING after a decision), each answered', async () => {
    await resetStats(store);
    const [first, pong, second] = await Promise.all([
      store.consume(rule, 'with-ping-a'),
      store.ping(),
      store.consume(rule, 'with-ping-b'),
    ]);
    const stats = await serverStats(store);
    assert.deepEqual([brief(first), pong, brief(second)], [[true, 2], undefined, [true, 2]]);
    assert.deepEqual([stats.evalsha, stats.ping], [2, 1]);
    assert.ok(stats.reads <= BATCH_READS, `${stats.reads} socket reads`);
  });

  it('decisions awaited one by one each leave in their own turn and each work', async () => {
    await resetStats(store);
    const decisions: RateDecision[] = [];
    for (let i = 0; i < 5; i++) decisions.push(await store.consume(rule, 'one-by-one'));
    for (let i = 0; i < 5; i++) decisions.push(await store.consume(rule, `one-by-one-${i}`));
    const stats = await serverStats(store);
    assert.deepEqual(decisions.map(brief), [
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
      ...Array.from({ length: 5 }, () => [true, 2]),
    ]);
    assert.equal(stats.evalsha, 10);
    // Nothing is held past its turn: every awaited decision was read on its own.
    assert.ok(stats.reads >= 10, `${stats.reads} socket reads for 10 decisions in 10 turns`);
  });

  it('batches again turn after turn', async () => {
    for (let turn = 0; turn < 3; turn++) {
      await resetStats(store);
      const decisions = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.consume(rule, `turn-${turn}-${i % 10}`)),
      );
      const stats = await serverStats(store);
      assert.deepEqual(
        decisions.map(brief),
        Array.from({ length: 20 }, (_, i) => (i < 10 ? [true, 2] : [true, 1])),
        `turn ${turn}`,
      );
      assert.ok(stats.reads <= BATCH_READS, `turn ${turn}: ${stats.reads} socket reads`);
    }
  });
});

describe('RedisStore write batch when Redis stops', { skip, timeout: 30_000 }, () => {
  /** Well under the command timeout: a held write must fail as fast as an unheld one. */
  const FAST_MS = 500;
  let server: RedisServer;
  let store: RedisStore;
  before(async () => {
    server = await RedisServer.start();
    store = await openRedisStore({ url: server.url, timeoutMs: 2000 });
    await store.consume(rule, 'warm');
  });
  after(async () => {
    await store?.close();
    await server?.stop();
  });

  const oneTurn = (label: string, n = 20) =>
    Array.from({ length: n }, (_, i) => store.consume(rule, `${label}-${i}`));

  async function assertAllFailFast(pending: Promise<RateDecision>[], started: number): Promise<void> {
    const outcomes = await Promise.allSettled(pending);
    const elapsed = performance.now() - started;
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.ok(
        outcome.status === 'rejected' && outcome.reason instanceof StoreUnavailableError,
        String(outcome.status === 'rejected' && outcome.reason),
      );
    }
    assert.ok(elapsed < FAST_MS, `failed after ${Math.round(elapsed)} ms`);
  }

  it('a batch held while its server is killed fails fast with StoreUnavailableError, none decided', async () => {
    const started = performance.now();
    const pending = oneTurn('killed-mid-turn');
    // kill(2) is sent before this turn ends, so the server dies before the held batch leaves:
    // not one decision can be made (without the batch, some were written and answered).
    const killed = server.kill();
    await assertAllFailFast(pending, started);
    await killed;
  });

  it('a batch sent to a stopped server fails fast with StoreUnavailableError, turn after turn', async () => {
    await server.kill();
    for (let turn = 0; turn < 3; turn++) {
      await assertAllFailFast(oneTurn(`stopped-${turn}`), performance.now());
    }
  });

  it('batches on the new connection once the server is back', async () => {
    await server.restart();
    assert.equal(await store.ready(5000), true);
    await store.consume(rule, 'rewarm'); // a restarted server has no scripts: NOSCRIPT, then EVAL
    await resetStats(store);
    const pending = oneTurn('back', 30);
    assert.equal(socketOf(store).writableCorked, 1, 'the new socket is held too');
    const decisions = await Promise.all(pending);
    const stats = await serverStats(store);
    assert.deepEqual(
      decisions.map(brief),
      Array.from({ length: 30 }, () => [true, 2]),
    );
    assert.ok(stats.reads <= BATCH_READS, `${stats.reads} socket reads`);
  });
});

describe('RedisStore’s command deadline', { skip, timeout: 30_000 }, () => {
  // Long enough that a CI machine busy with the other suites (Redis a process of its own, starved too)
  // still answers within the stall below, and that a late timer stays inside the upper bound.
  const TIMEOUT_MS = 500;
  let server: RedisServer;
  let store: RedisStore;
  before(async () => {
    server = await RedisServer.start();
    store = await openRedisStore({ url: server.url, timeoutMs: TIMEOUT_MS });
    await store.consume(rule, 'warm');
  });
  after(async () => {
    server?.resume();
    await store?.close();
    await server?.stop();
  });

  it('fails every decision of a frozen server at the shared deadline, then decides again once it answers', async () => {
    server.pause(); // SIGSTOP: the connection stays open, nothing answers
    const started = performance.now();
    const outcomes = await Promise.allSettled([
      store.consume(rule, 'frozen-a'),
      store.peek(rule, 'frozen-b'),
      store.ping(),
    ]);
    const elapsed = performance.now() - started;
    for (const outcome of outcomes) {
      assert.ok(
        outcome.status === 'rejected' && outcome.reason instanceof StoreUnavailableError,
        String(outcome.status === 'rejected' ? outcome.reason : 'answered'),
      );
      assert.match(String((outcome as PromiseRejectedResult).reason.message), /timed out/);
    }
    // Not before the timeout; the upper bound leaves room for a loaded machine's timers.
    assert.ok(elapsed >= TIMEOUT_MS - 5, `failed after ${Math.round(elapsed)} ms`);
    assert.ok(elapsed < TIMEOUT_MS * 5, `failed after ${Math.round(elapsed)} ms`);
    server.resume();
    assert.deepEqual(brief(await store.consume(rule, 'thawed')), [true, 2]);
  });

  it('reads an answer that came while this process stalled past the deadline, instead of failing it', async () => {
    const decision = store.consume(rule, 'stalled');
    await endOfTurn(); // the batch is written
    // A stalled event loop (or a starved CPU): Redis answers at once, but the deadline's timer and
    // the answer are due together when this process runs again, and timers come first in a turn.
    const until = performance.now() + TIMEOUT_MS * 3;
    while (performance.now() < until) {
      // busy: nothing of this process runs
    }
    assert.deepEqual(brief(await decision), [true, 2]);
    // A command that really is late still fails at its deadline.
    server.pause();
    try {
      await assert.rejects(store.consume(rule, 'stalled'), /timed out/);
    } finally {
      server.resume();
    }
  });
});
