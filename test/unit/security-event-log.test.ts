// The security-event log's promises: record() returns at once, never throws, batches, is bounded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SecurityEventLog } from '../../src/auth/security-event-log.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type {
  NewSecurityEvent,
  SecurityEventsRepository,
} from '../../src/db/repositories/security-events.ts';

/** A repository that only keeps the batches it is given (SQL itself is tested over HTTP on both databases). */
function fakeRepository(insert: (batch: readonly NewSecurityEvent[]) => Promise<void>) {
  const batches: (readonly NewSecurityEvent[])[] = [];
  const repository = {
    insert: async (batch: readonly NewSecurityEvent[]) => {
      batches.push(batch);
      await insert(batch);
    },
  } as unknown as SecurityEventsRepository;
  return { repository, batches };
}

function logWith(insert: (batch: readonly NewSecurityEvent[]) => Promise<void> = async () => {}) {
  const clock = new ManualClock(1_000);
  const errors: { error: unknown; lost: number }[] = [];
  const { repository, batches } = fakeRepository(insert);
  const log = new SecurityEventLog({
    repository,
    clock,
    instance: 'i-1',
    retentionMs: 1000,
    onError: (error, lost) => errors.push({ error, lost }),
  });
  return { log, clock, batches, errors };
}

describe('SecurityEventLog', () => {
  it('stamps time and instance, and writes one turn of events in one insert, after record() returned', async () => {
    const { log, clock, batches } = logWith();
    log.record({ type: 'lock-started', control: 'login-ip', address: '203.0.113.1' });
    clock.advance(5);
    log.record({ type: 'admin-reset', control: 'login-account', email: 'a@example.com', actorId: 4 });
    assert.equal(batches.length, 0, 'nothing is written while the request is still running');
    await log.flush();
    assert.deepEqual(batches, [
      [
        {
          at: 1000,
          type: 'lock-started',
          control: 'login-ip',
          email: null,
          address: '203.0.113.1',
          instance: 'i-1',
          actorId: null,
        },
        {
          at: 1005,
          type: 'admin-reset',
          control: 'login-account',
          email: 'a@example.com',
          address: null,
          instance: 'i-1',
          actorId: 4,
        },
      ],
    ]);
  });

  it('reports a failed write to onError and never to the reporter; later events are written', async () => {
    let fail = true;
    const { log, batches, errors } = logWith(async () => {
      if (fail) throw new Error('database down');
    });
    log.record({ type: 'lock-started', control: 'login-ip', address: 'x' });
    await log.flush();
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.lost, 1);
    fail = false;
    log.record({ type: 'lock-started', control: 'login-ip', address: 'y' });
    await log.flush();
    assert.equal(batches.length, 2);
    assert.equal(errors.length, 1);
  });

  it('keeps recording while a write is in flight, and bounds the queue when the database hangs', async () => {
    let release: () => void = () => {};
    const { log, batches, errors } = logWith(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    log.record({ type: 'lock-started', control: 'login-ip', address: 'first' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(batches.length, 1, 'the first write is in flight');
    for (let i = 0; i < 10_005; i++)
      log.record({ type: 'lock-started', control: 'login-ip', address: `a${i}` });
    release();
    // Drain the rest: every later insert is released as soon as it starts.
    const flushing = log.flush();
    while (batches.length < 1 + 20) {
      await new Promise((resolve) => setImmediate(resolve));
      release();
    }
    await flushing;
    const written = batches.slice(1).reduce((sum, batch) => sum + batch.length, 0);
    assert.equal(written, 10_000, 'at most 10 000 events wait');
    assert.ok(
      batches.slice(1).every((batch) => batch.length <= 500),
      'batches of at most 500',
    );
    assert.deepEqual(
      errors.map((e) => e.lost),
      [5],
      'the 5 dropped are reported',
    );
  });

  it('does not throw when the clock or the error handler does', async () => {
    const log = new SecurityEventLog({
      repository: fakeRepository(async () => {}).repository,
      clock: {
        now: () => {
          throw new Error('no clock');
        },
        sleep: async () => {},
      },
      instance: 'i',
      retentionMs: 1,
      onError: () => {
        throw new Error('no logger');
      },
    });
    assert.doesNotThrow(() => log.record({ type: 'lock-started', control: 'login-ip' }));
    await log.flush();
  });
});

describe('security-event configuration', () => {
  it('keeps events 90 days and names the instance by host and pid unless told otherwise', () => {
    const config = loadConfig({});
    assert.equal(config.securityEventRetentionMs, 90 * 86_400_000);
    assert.match(config.instanceId, new RegExp(`:${process.pid}$`));
    const custom = loadConfig({ SECURITY_EVENT_RETENTION: '12h', INSTANCE_ID: 'web-1' });
    assert.equal(custom.securityEventRetentionMs, 12 * 3_600_000);
    assert.equal(custom.instanceId, 'web-1');
  });

  it('names both variables when their values are invalid', () => {
    assert.throws(
      () => loadConfig({ SECURITY_EVENT_RETENTION: '90 days', INSTANCE_ID: 'has space' }),
      (error: Error & { problems?: string[] }) =>
        error.problems?.some((p) => p.startsWith('SECURITY_EVENT_RETENTION=')) === true &&
        error.problems?.some((p) => p.startsWith('INSTANCE_ID=')) === true,
    );
  });
});
