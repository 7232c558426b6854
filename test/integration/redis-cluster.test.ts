// The Redis store on a 3-master Redis Cluster started for this file: the store contract, unchanged.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RedisStore } from '../../src/rate-limit/stores/redis-store.ts';
import type { RateRule } from '../../src/rate-limit/stores/store.ts';
import { openRedisStore } from '../helpers/redis.ts';
import { RedisCluster, skipUnlessRedisBinaries } from '../helpers/redis-server.ts';
import { storeContract } from '../helpers/store-contract.ts';

const skip = skipUnlessRedisBinaries();

describe('RedisStore on Redis Cluster', { skip }, () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await RedisCluster.start();
  });
  after(() => cluster?.stop());

  describe('store contract (time passed in from the ManualClock)', () => {
    storeContract((clock, options) => openRedisStore({ cluster: cluster.nodeList, clock, ...options }));
  });

  describe('production mode (time from Redis TIME)', () => {
    let store: RedisStore;
    before(async () => {
      store = await openRedisStore({ cluster: cluster.nodeList });
    });
    after(() => store.close());

    it('spreads keys over the masters, each key whole in its own slot', async () => {
      const rule: RateRule = { name: 'cluster-spread', limit: 2, windowMs: 60_000 };
      const keys = Array.from({ length: 30 }, (_, i) => `user-${i}`);
      for (const key of keys) {
        assert.deepEqual(
          [(await store.consume(rule, key)).allowed, (await store.consume(rule, key)).allowed],
          [true, true],
        );
        assert.equal((await store.consume(rule, key)).allowed, false);
      }
      const holders = await Promise.all(
        cluster.nodes.map(async (node) => {
          const found = await node.cli('KEYS', `${store.keyOf(rule, '*').split('{')[0]}{cluster-spread:*`);
          return found ? found.split('\n').length : 0;
        }),
      );
      assert.equal(
        holders.reduce((a, b) => a + b, 0),
        keys.length,
      );
      assert.ok(holders.filter((n) => n > 0).length >= 2, `keys on more than one master: ${holders}`);
    });
  });
});
