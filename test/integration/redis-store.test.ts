// The Redis store on a real Redis: the store contract, the scripts, keys, replies, failures.
import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../src/clock.ts';
import { shapeOf } from '../../src/rate-limit/sliding-window.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { parseDecision, parseFlag, shapeScripts } from '../../src/rate-limit/stores/redis-scripts.ts';
import { createRedisClient, RedisStore } from '../../src/rate-limit/stores/redis-store.ts';
import { type RateRule, StoreUnavailableError } from '../../src/rate-limit/stores/store.ts';
import { openRedisStore } from '../helpers/redis.ts';
import { freePort, RedisServer, skipUnlessRedisBinaries } from '../helpers/redis-server.ts';
import { skipUnless } from '../helpers/services.ts';
import { seeded, storeContract } from '../helpers/store-contract.ts';

const skip = await skipUnless('redis');
const MINUTE = 60_000;

describe('RedisStore (time passed in from the ManualClock)', { skip }, () => {
  storeContract((clock, options) => openRedisStore({ clock, ...options }));
});

describe('RedisStore scripts mirror sliding-window.ts', { skip }, () => {
  // The same random operations against the memory store and the Redis store give the same answers.
  const rules: RateRule[] = [
    { name: 'mirror-log', limit: 7, windowMs: 10_000 },
    { name: 'mirror-log-32', limit: 32, windowMs: 45_000 },
    { name: 'mirror-buckets', limit: 33, windowMs: 10_000 },
    { name: 'mirror-buckets-odd', limit: 100, windowMs: 1_234_567 },
  ];
  for (const rule of rules) {
    it(`${rule.name} (${shapeOf(rule.limit, rule.windowMs).kind}): identical decisions over 600 random operations and bursts`, async (t) => {
      const clock = new ManualClock(1_700_000_000_123);
      const memory = new MemoryStore({ clock, sweepIntervalMs: 0 });
      const redis = await openRedisStore({ clock });
      t.after(() => Promise.all([memory.close(), redis.close()]));
      const random = seeded(rule.limit * 7919);
      const tokens: { key: string; token: number }[] = [];
      let refusals = 0;
      const consume = async (key: string, step: number) => {
        const [m, r] = [memory.consume(rule, key), await redis.consume(rule, key)];
        assert.deepEqual(r, m, `consume at step ${step}`);
        if (m.token !== undefined) tokens.push({ key, token: m.token });
        else refusals++;
      };
      for (let step = 0; step < 600; step++) {
        clock.advance(Math.floor(random() ** 3 * rule.windowMs * 0.6));
        const key = random() < 0.8 ? 'a' : 'b';
        const roll = random();
        if (roll < 0.05) {
          // A burst of up to twice the budget, its first `limit` within a window: the refusal paths.
          const count = 1 + Math.floor(random() * 2 * rule.limit);
          const stepMs = Math.floor((random() * rule.windowMs) / rule.limit);
          for (let i = 0; i < count; i++) {
            if (i > 0) clock.advance(stepMs);
            await consume(key, step);
          }
        } else if (roll < 0.7 || tokens.length === 0) {
          await consume(key, step);
        } else if (roll < 0.85) {
          assert.deepEqual(await redis.peek(rule, key), memory.peek(rule, key), `peek at step ${step}`);
        } else if (roll < 0.98) {
          const { key: owner, token } = tokens[Math.floor(random() * tokens.length)]!;
          memory.release(rule, owner, token);
          await redis.release(rule, owner, token);
        } else {
          memory.reset(rule, key);
          await redis.reset(rule, key);
        }
      }
      assert.ok(refusals > rule.limit, `only ${refusals} refusals: the budget was hardly ever reached`);
    });
  }
});

describe('RedisStore in production mode (time from Redis TIME)', { skip }, () => {
  let store: RedisStore;
  before(async () => {
    store = await openRedisStore();
  });
  after(() => store.close());
  const rule: RateRule = { name: 'redis-time', limit: 3, windowMs: MINUTE };

  it("decides at the server's time: the token is Redis TIME in ms, whatever the caller's clock says", async () => {
    const before = Date.now();
    const decision = await store.consume(rule, 'time');
    const server = await store.client.time();
    const serverMs = Number(server[0]) * 1000 + Math.floor(Number(server[1]) / 1000);
    assert.equal(decision.allowed, true);
    assert.ok(decision.token! <= serverMs && decision.token! > serverMs - 5000, 'token is a Redis time');
    assert.ok(Math.abs(decision.token! - before) < 60_000, 'this machine and its Redis agree roughly');
  });

  it('stores one key per (rule, key) with a hash tag, expiring with its window; peek writes nothing', async () => {
    const key = store.keyOf(rule, 'tagged');
    assert.match(key, /\{redis-time:tagged\}/);
    await store.peek(rule, 'tagged');
    assert.equal(await store.client.exists(key), 0, 'peek created no key');
    await store.consume(rule, 'tagged');
    const ttl = await store.client.pttl(key);
    assert.ok(ttl > MINUTE - 5000 && ttl <= MINUTE, `PTTL ${ttl} ≈ the window`);
    // Buckets of 10 s: the oldest bucket counts in full for up to one bucket past the window, so
    // the key must outlive the window by a bucket; PTTL is read a few ms (not 10 s) after the write.
    const buckets: RateRule = { name: 'redis-time-buckets', limit: 40, windowMs: 160_000 };
    await store.consume(buckets, 'tagged');
    const bucketTtl = await store.client.pttl(store.keyOf(buckets, 'tagged'));
    assert.ok(bucketTtl > 160_000 && bucketTtl <= 170_000, `PTTL ${bucketTtl}: the window + one bucket`);
  });

  it('reloads its scripts with EVAL after NOSCRIPT (a restart or SCRIPT FLUSH), then runs them by SHA', async () => {
    await store.client.script('FLUSH');
    assert.equal((await store.consume(rule, 'noscript')).allowed, true);
    const [loaded] = (await store.client.script(
      'EXISTS',
      shapeScripts(shapeOf(rule.limit, rule.windowMs)).consume.sha,
    )) as number[];
    assert.equal(loaded, 1);
    assert.equal((await store.peek(rule, 'noscript')).remaining, 2);
  });

  it('turns a Redis error (a key of the wrong type) into StoreUnavailableError, never a refusal', async () => {
    await store.client.lpush(store.keyOf(rule, 'wrongtype'), 'x');
    await assert.rejects(() => Promise.resolve(store.consume(rule, 'wrongtype')), StoreUnavailableError);
    await store.client.del(store.keyOf(rule, 'wrongtype'));
  });
});

describe('RedisStore replies are shape-checked', () => {
  const log = shapeOf(3, MINUTE);
  it('accepts exactly the four integers a decision is made of, as one string', () => {
    assert.deepEqual(parseDecision('1,2,0,1700000000000', log, true), {
      allowed: true,
      remaining: 2,
      resetMs: 0,
      token: 1_700_000_000_000,
    });
    assert.deepEqual(parseDecision('0,0,500,-1', log, true), {
      allowed: false,
      remaining: 0,
      resetMs: 500,
      token: null,
    });
  });
  for (const [label, reply, consume] of [
    ['not a string', [1, 2, 0, 5], true],
    ['a status', 'OK', true],
    ['too short', '1,2,0', true],
    ['too long', '1,2,0,5,6', true],
    ['an empty field', '1,2,,5', true],
    ['a sign without digits', '1,2,0,-', true],
    ['a plus sign', '1,+2,0,5', true],
    ['a trailing comma', '1,2,0,5,', true],
    ['seventeen digits', '1,2,0,00000000000000005', true],
    ['a field with a space', '1, 2,0,5', true],
    ['a fraction', '1,2,0,5.5', true],
    ['an exponent', '1,2,0,1e3', true],
    ['an integer beyond 2^53', '1,2,0,9999999999999999', true],
    ['allowed not 0/1', '2,2,0,5', true],
    ['remaining above the limit', '1,4,0,5', true],
    ['negative reset', '1,2,-1,5', true],
    ['a refusal with remaining', '0,1,5,-1', true],
    ['an admission without a token', '1,2,0,-1', true],
    ['a peek with a token', '1,2,0,5', false],
  ] as const) {
    it(`refuses a reply that is ${label} as StoreUnavailableError`, () => {
      assert.throws(() => parseDecision(reply, log, consume), StoreUnavailableError);
    });
  }
  it('checks release and reset replies too', () => {
    assert.equal(parseFlag('release', 1), true);
    assert.equal(parseFlag('reset', 0), false);
    assert.throws(() => parseFlag('release', 'OK'), StoreUnavailableError);
    assert.throws(() => parseFlag('reset', 2), StoreUnavailableError);
  });
});

describe('RedisStore round trips', { skip: skip || skipUnlessRedisBinaries() }, () => {
  // A private server: INFO commandstats counts every command it has seen, and nobody else talks to it.
  let server: RedisServer;
  let store: RedisStore;
  before(async () => {
    server = await RedisServer.start();
    store = await openRedisStore({ url: server.url });
  });
  after(async () => {
    await store.close();
    await server.stop();
  });

  it('costs one EVALSHA per decision, release and reset (after the scripts are cached)', async () => {
    const rule: RateRule = { name: 'round-trips', limit: 40, windowMs: MINUTE };
    // First use of each script: NOSCRIPT, then EVAL caches it.
    await store.consume(rule, 'warm');
    await store.peek(rule, 'warm');
    await store.release(rule, 'warm', 0);
    await store.reset(rule, 'warm');
    await server.cli('CONFIG', 'RESETSTAT');
    for (let i = 0; i < 50; i++) await store.consume(rule, 'k');
    for (let i = 0; i < 20; i++) await store.peek(rule, 'k');
    await store.release(rule, 'k', 0);
    await store.reset(rule, 'k');
    const stats = await server.cli('INFO', 'commandstats');
    const calls = Object.fromEntries(
      [...stats.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]),
    );
    // GET/SET/DEL/TIME run inside the scripts; the only commands on the wire are the EVALSHAs
    // (and the INFO that reads these numbers).
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(calls).filter(([name]) => !['info', 'config|resetstat'].includes(name)),
      ),
      { evalsha: 72, get: 71, set: 40, del: 1, time: 70 },
    );
  });
});

describe('RedisStore when Redis is unreachable', () => {
  it('fails fast with StoreUnavailableError (no offline queue, no retries)', async () => {
    const port = await freePort(); // nobody listens there
    const store = new RedisStore({
      client: createRedisClient({
        url: `redis://127.0.0.1:${port}`,
        clusterNodes: null,
        keyPrefix: 'unreachable:',
        commandTimeoutMs: 100,
      }),
      keyPrefix: 'unreachable:',
      timeoutMs: 100,
    });
    try {
      const rule: RateRule = { name: 'down', limit: 3, windowMs: MINUTE };
      for (const operation of [
        () => store.consume(rule, 'k'),
        () => store.peek(rule, 'k'),
        () => store.release(rule, 'k', 1),
        () => store.reset(rule, 'k'),
        () => store.ping(),
      ]) {
        const started = performance.now();
        await assert.rejects(operation, (error) => {
          assert.ok(error instanceof StoreUnavailableError);
          // Refused by the client at once (its error is the cause), not queued until the store's deadline.
          assert.ok(error.cause instanceof Error, 'the client refused the command itself');
          return true;
        });
        // Wall time, because the deadline is a real timer here. The bound is the command timeout
        // plus room for a loaded machine, where a 100 ms timer can fire hundreds of ms late; what
        // it must catch is a wait for reconnects or a queue, which lasts seconds (connectTimeout).
        assert.ok(performance.now() - started < 100 + 900, 'answered within the command timeout');
      }
    } finally {
      await store.close();
    }
  });

  it('drops a connection whose server accepts and never answers, and connects again', {
    timeout: 10_000,
  }, async () => {
    // A TCP server that takes connections and reads what is sent, but never replies.
    const silent = createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    let connections = 0;
    const sockets = new Set<Socket>();
    silent.on('connection', (socket) => {
      connections++;
      sockets.add(socket);
    });
    const client = createRedisClient({
      url: `redis://127.0.0.1:${port}`,
      clusterNodes: null,
      keyPrefix: 'silent:',
      commandTimeoutMs: 20, // the setup deadline is then its floor, 1 s
    });
    const store = new RedisStore({ client, keyPrefix: 'silent:', timeoutMs: 20 });
    try {
      const rule: RateRule = { name: 'silent', limit: 3, windowMs: MINUTE };
      await assert.rejects(store.consume(rule, 'k'), StoreUnavailableError);
      // Its setup commands time out (or its socket does), and it connects again. Bounded waits,
      // so that a client that never gives up fails the test instead of hanging it.
      const errors: string[] = [];
      client.on('error', (error: Error) => errors.push(error.message));
      const deadline = performance.now() + 5000;
      while (connections < 2 && performance.now() < deadline) await sleep(20);
      assert.ok(connections >= 2, 'a second connection after the silent first');
      // What it reports depends on which of its deadlines ran out first (a setup command's or the socket's).
      assert.ok(errors.length > 0, 'the silent connection was reported');
    } finally {
      client.disconnect();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await store.close();
    }
  });
});
