// Which driver errors mean "the database is away", and the outage's edges.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { Registry } from 'prom-client';
import { ManualClock } from '../../src/clock.ts';
import { Availability, isUnavailable } from '../../src/db/availability.ts';
import { DatabaseOutage, registerDatabaseMetrics } from '../../src/http/plugins/database-outage.ts';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isUnavailable', () => {
  it('is true for a server that refuses, resets, shuts down, starts up or runs past the statement timeout', () => {
    for (const error of [
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      withCode('EPIPE'),
      withCode('ETIMEDOUT'),
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P02'),
      withCode('57P03', 'the database system is starting up'),
      withCode('57014', 'canceling statement due to statement timeout'),
      withCode('08006'),
      withCode('08001'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed'),
    ])
      assert.equal(isUnavailable(error), true, `${error.message} (${(error as { code?: string }).code})`);
  });

  it('is false for a query the database refused, and for anything else', () => {
    for (const error of [
      withCode('23505', 'duplicate key value violates unique constraint'),
      withCode('22P02', 'invalid input syntax for type integer'),
      withCode('42P01', 'relation "tasks" does not exist'),
      withCode('0800'),
      new Error('Cannot use a pool after calling end on the pool'),
      new TypeError('x is not a function'),
      'ECONNREFUSED',
      null,
    ])
      assert.equal(isUnavailable(error), false, String(error));
  });
});

describe('Availability', () => {
  it('tells its observers of the first failure and of the first success after it, nothing else', () => {
    const availability = new Availability();
    const heard: string[] = [];
    const stop = availability.observe({
      outageStarted: (error) => heard.push(`started ${(error as Error).message}`),
      outageEnded: () => heard.push('ended'),
    });
    availability.succeeded();
    availability.failed(new Error('first'));
    availability.failed(new Error('second'));
    assert.equal(availability.available, false);
    availability.succeeded();
    availability.succeeded();
    stop();
    availability.failed(new Error('unheard'));
    assert.deepEqual(heard, ['started first', 'ended']);
  });

  it('is not ended by a query that was under way when the outage started', () => {
    const availability = new Availability();
    const heard: string[] = [];
    availability.observe({
      outageStarted: () => heard.push('started'),
      outageEnded: () => heard.push('ended'),
    });
    const early = availability.since;
    availability.failed(new Error('terminated'));
    const late = availability.since;
    availability.succeeded(early);
    assert.equal(availability.available, false);
    availability.succeeded(late);
    assert.deepEqual(heard, ['started', 'ended']);
  });

  it('is ended by a connection made since a shutdown began, not by an older one that still answers', () => {
    const availability = new Availability();
    const heard: string[] = [];
    availability.observe({
      outageStarted: () => heard.push('started'),
      outageEnded: () => heard.push('ended'),
    });
    const old = availability.since;
    availability.failed(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    );
    availability.succeeded(availability.since, old); // a backend the fast shutdown has not ended yet
    assert.equal(availability.available, false);
    availability.succeeded(availability.since, availability.since); // a connection made after
    assert.deepEqual(heard, ['started', 'ended']);

    // Too many connections ends no session: a connection from before answering does end it.
    const before = availability.since;
    availability.failed(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }));
    availability.succeeded(availability.since, before);
    assert.equal(availability.available, true);
  });

  it('is not restarted by a query or a connection from before the database came back', () => {
    const availability = new Availability();
    const heard: string[] = [];
    availability.observe({
      outageStarted: () => heard.push('started'),
      outageEnded: () => heard.push('ended'),
    });
    const before = availability.since;
    availability.failed(new Error('terminated'), before);
    const during = availability.since;
    availability.succeeded(during);
    availability.failed(new Error('a connect that waited through the restart'), during);
    availability.failed(new Error('a connection the restart ended'), before);
    assert.equal(availability.available, true);
    availability.failed(new Error('a new outage'), availability.since);
    assert.deepEqual(heard, ['started', 'ended', 'started']);
  });
});

/** A logger that keeps what it is asked to write. */
function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message = '') =>
      lines.push({ level, fields, message });
  return { lines, log: { error: at('error'), warn: at('warn') } as unknown as FastifyBaseLogger };
}

describe('DatabaseOutage', () => {
  it('logs once when an outage starts and once when it ends, with the count of requests refused', () => {
    const clock = new ManualClock();
    const { lines, log } = recordingLogger();
    const outage = new DatabaseOutage(clock, log);
    outage.outageStarted(new Error('connect ECONNREFUSED'));
    for (let i = 0; i < 7; i++) outage.refuse();
    clock.advance(6_500);
    outage.outageEnded();
    assert.deepEqual(
      lines.map((line) => line.level),
      ['error', 'warn'],
    );
    assert.deepEqual(lines[1]!.fields, { durationMs: 6_500, refusedRequests: 7 });
    assert.match(lines[1]!.message, /after 6\.5 s; 7 requests were answered 503/);
    assert.equal(outage.up, true);
    assert.equal(outage.refusedTotal, 7);
  });

  it('asks for 1 s at first and more as the outage lasts, never more than 5 s', () => {
    const clock = new ManualClock();
    const outage = new DatabaseOutage(clock, recordingLogger().log);
    outage.outageStarted(new Error('gone'));
    const waits: number[] = [];
    for (const step of [0, 4_999, 1, 5_000, 10_000, 60_000]) {
      clock.advance(step);
      waits.push(outage.refuse());
    }
    assert.deepEqual(waits, [1, 1, 2, 3, 5, 5]);
  });

  it('shows the outage in database_up and the refusals in database_unavailable_refusals_total', async () => {
    const registry = new Registry();
    const outage = new DatabaseOutage(new ManualClock(), recordingLogger().log);
    registerDatabaseMetrics(registry, outage);
    const scrape = async () => registry.metrics();
    assert.match(await scrape(), /^database_up 1$/m);
    outage.outageStarted(new Error('gone'));
    outage.refuse();
    outage.refuse();
    assert.match(await scrape(), /^database_up 0$/m);
    assert.match(await scrape(), /^database_unavailable_refusals_total 2$/m);
    outage.outageEnded();
    outage.refuse();
    const text = await scrape();
    assert.match(text, /^database_up 1$/m);
    assert.match(text, /^database_unavailable_refusals_total 3$/m);
  });
});
