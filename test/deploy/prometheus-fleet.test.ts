// A real Prometheus on the shipped config and rules: Redis stopped turns the degraded-store alert on.
/*
 * Real time, real processes: Debian's prometheus, two `src/server.ts` processes on one PostgreSQL
 * schema and a redis-server of this test's own. The shipped prometheus.yml is used with its
 * targets substituted and, so that the test takes seconds rather than minutes, its 15 s scrape
 * and evaluation intervals (and the scrape timeout) set to 1 s; alerts.yml is the shipped file
 * itself. Pending is enough: an alert is pending from the first evaluation its expression holds,
 * and firing only after its `for` (a minute), which the promtool unit tests pin instead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { privateTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { skipUnlessInstalled, startPrometheus, substitutedConfig } from '../helpers/prometheus.ts';
import { uniquePrefix } from '../helpers/redis.ts';
import { freePort, RedisServer, skipUnlessRedisBinaries } from '../helpers/redis-server.ts';
import { listeningUrl, type ServerProcess, startServer } from '../helpers/server-process.ts';
import { skipUnless } from '../helpers/services.ts';

const skip = skipUnlessInstalled('prometheus') || skipUnlessRedisBinaries() || (await skipUnless('postgres'));

interface Target {
  readonly labels: { readonly instance: string; readonly job: string };
  readonly health: 'up' | 'down' | 'unknown';
  readonly lastError: string;
}

interface Alert {
  readonly labels: Readonly<Record<string, string>>;
  readonly state: 'pending' | 'firing';
}

/** Polls `look` every 250 ms until it answers a value, or fails after `ms` with `describe()`. */
async function eventually<T>(ms: number, look: () => Promise<T | null>, describe: () => Promise<string>) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await look();
    if (value !== null) return value;
    if (Date.now() > deadline) assert.fail(`not within ${ms / 1000} s: ${await describe()}`);
    await sleep(250);
  }
}

describe('Prometheus on deploy/prometheus, scraping a fleet of two instances on Redis', { skip }, () => {
  let redis: RedisServer;
  let database: TestDatabase;
  const instances: ServerProcess[] = [];
  const metricsAddresses: string[] = [];

  before(async () => {
    redis = await RedisServer.start();
    // An empty schema: the first instance migrates it, as the fleet's first start does.
    database = await privateTestDatabase('postgres', { prepared: false });
    const prefix = uniquePrefix();
    for (const name of ['api-1', 'api-2']) {
      const metricsPort = await freePort();
      const instance = startServer({
        INSTANCE_ID: name,
        DATABASE_URL: database.url!,
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: prefix,
        METRICS_HOST: '127.0.0.1',
        METRICS_PORT: String(metricsPort),
        SEED_DEMO: 'false',
      });
      instances.push(instance);
      await listeningUrl(instance.output, instance.exited);
      metricsAddresses.push(`127.0.0.1:${metricsPort}`);
    }
  });

  after(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await redis?.stop();
    await database?.close();
  });

  it('sees every instance up, and the degraded-store alert once Redis stops', async (t) => {
    const config = await substitutedConfig(metricsAddresses, '1s');
    const prometheus = await startPrometheus(config, await freePort());
    t.after(() => prometheus.stop());

    const targets = () => prometheus.api<{ activeTargets: Target[] }>('/api/v1/targets');
    const seen = await eventually(
      30_000,
      async () => {
        const { activeTargets } = await targets();
        const up = activeTargets.filter((target) => target.health === 'up');
        return up.length === metricsAddresses.length ? up : null;
      },
      async () => JSON.stringify(await targets()),
    );
    assert.deepEqual(seen.map((target) => target.labels.instance).sort(), [...metricsAddresses].sort());
    assert.ok(seen.every((target) => target.labels.job === 'task-portal'));
    const alerts = async () => (await prometheus.api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;
    assert.deepEqual(await alerts(), [], 'a healthy fleet: no alert even pending');

    await redis.kill();
    const degraded = await eventually(
      30_000,
      async () => {
        const found = (await alerts()).filter(
          (alert) => alert.labels.alertname === 'TaskPortalRateLimitStoreDegraded',
        );
        return found.length === metricsAddresses.length ? found : null;
      },
      async () => JSON.stringify({ alerts: await alerts(), log: prometheus.output().slice(-2000) }),
    );
    for (const alert of degraded) {
      assert.ok(['pending', 'firing'].includes(alert.state), alert.state);
      assert.equal(alert.labels.failure_mode, 'local');
      assert.equal(alert.labels.severity, 'warning');
    }
    assert.deepEqual(
      degraded.map((alert) => alert.labels.instance).sort(),
      [...metricsAddresses].sort(),
      'both instances, each found degraded by a scrape (no request came)',
    );
  });
});
