// The failover store over a fake remote store and a ManualClock: outage, probe, recovery, modes.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { createStore, failoverStack } from '../../src/rate-limit/stores/create-store.ts';
import type { StoreFailureMode } from '../../src/rate-limit/stores/store.ts';
import {
  type RateDecision,
  type RateRule,
  StoreUnavailableError,
} from '../../src/rate-limit/stores/store.ts';
import {
  type DecisionEvent,
  observeStore,
  type RemoteErrorEvent,
  type StoreStateEvent,
} from '../../src/rate-limit/stores/store-events.ts';
import { storeContract } from '../helpers/store-contract.ts';
import { FakeRemoteStore, MemoryLog } from '../helpers/store-doubles.ts';

const RETRY_MS = 1000;
const rule: RateRule = { name: 'three', limit: 3, windowMs: 60_000 };

/** Lets the promise callbacks of a settled fake operation run (no timer, no real wait). */
const settle = () => new Promise<void>(setImmediate);

function setup(t: TestContext, mode: StoreFailureMode) {
  const clock = new ManualClock();
  const remote = new FakeRemoteStore(clock);
  const log = new MemoryLog();
  const stack = failoverStack(remote, { failureMode: mode, retryAfterMs: RETRY_MS }, clock, log);
  const events = {
    decisions: [] as DecisionEvent[],
    states: [] as StoreStateEvent[],
    errors: [] as RemoteErrorEvent[],
  };
  const stop = observeStore(stack.store, {
    decision: (event) => events.decisions.push(event),
    storeState: (event) => events.states.push(event),
    redisError: (event) => events.errors.push(event),
  });
  t.after(async () => {
    stop();
    await stack.close();
  });
  const store = stack.store;
  const readiness = () => stack.readiness[0]!.check();
  /** Takes the remote store down and lets the next consume find out (its answer comes from the fallback). */
  const breakRemote = async () => {
    remote.fail();
    return store.consume(rule, 'k');
  };
  return { clock, remote, log, stack, store, events, readiness, breakRemote };
}

const remaining = (decision: RateDecision) => [decision.allowed, decision.remaining];

describe('FailoverStore over a remote store that answers', () => {
  storeContract(
    (clock, options) =>
      failoverStack(new FakeRemoteStore(clock, options), { failureMode: 'local' }, clock, new MemoryLog())
        .store,
  );
});

describe('FailoverStore while the remote store answers', () => {
  it('decides there, times each decision, and reports it up', async (t) => {
    const { remote, store, events, readiness, stack } = setup(t, 'local');
    const decision = store.consume(rule, 'k');
    assert.ok(decision instanceof Promise, 'a remote decision is a promise');
    assert.deepEqual(remaining(await decision), [true, 2]);
    assert.deepEqual(remaining(await store.peek(rule, 'k')), [true, 2]);
    assert.deepEqual(
      events.decisions.map(({ control, operation }) => `${control} ${operation}`),
      ['three consume', 'three peek'],
    );
    assert.ok(events.decisions.every((event) => event.seconds >= 0 && event.store === store));
    assert.deepEqual(await readiness(), { state: 'up', fatal: false });
    assert.equal(remote.count('ping'), 1, 'readiness asks the remote store itself');
    assert.deepEqual(stack.backend, { name: 'redis', failureMode: 'local' });
    assert.equal(stack.readiness[0]!.name, 'redis');
  });

  it('gives a remote admission back there', async (t) => {
    const { store } = setup(t, 'local');
    const first = await store.consume(rule, 'k');
    assert.ok(first.token !== undefined && first.token >= 0);
    await store.release(rule, 'k', first.token);
    assert.deepEqual(remaining(await store.peek(rule, 'k')), [true, 3]);
  });

  it('sends each observer the events of its own store only', async (t) => {
    const { store, events } = setup(t, 'local');
    const other = setup(t, 'local');
    await other.store.consume(rule, 'k');
    assert.deepEqual(events.decisions, []);
    await store.consume(rule, 'k');
    assert.equal(events.decisions.length, 1);
  });
});

describe('FailoverStore, RATE_LIMIT_STORE_FAILURE=local', () => {
  it('decides locally from the first failure on, logs and publishes the outage once', async (t) => {
    const { remote, store, log, events, breakRemote } = setup(t, 'local');
    await store.consume(rule, 'k'); // one unit spent in the remote store

    const fallback = await breakRemote();
    assert.deepEqual(remaining(fallback), [true, 2], 'the local store starts with a whole budget');
    assert.ok(fallback.token !== undefined && fallback.token < 0, 'a local token');
    assert.deepEqual(
      events.states.map(({ state, mode }) => `${state} ${mode}`),
      ['degraded local'],
    );
    assert.deepEqual(
      events.errors.map(({ operation }) => operation),
      ['consume'],
    );
    assert.deepEqual(
      log.lines.map(({ level }) => level),
      ['warn'],
    );
    assert.match(log.lines[0]!.message, /degraded/);
    assert.deepEqual(log.lines[0]!.details, {
      mode: 'local',
      reason: 'fake remote store: consume failed',
      connection: 'connect ECONNREFUSED (fake)',
    });

    // Until a probe is due, the remote store is not asked at all, and decisions are synchronous.
    const asked = remote.asked.length;
    const local = [store.consume(rule, 'k'), store.consume(rule, 'k'), store.consume(rule, 'k')];
    assert.ok(local.every((decision) => !(decision instanceof Promise)));
    assert.deepEqual(
      local.map((decision) => remaining(decision as RateDecision)),
      [
        [true, 1],
        [true, 0],
        [false, 0],
      ],
    );
    assert.equal(remote.asked.length, asked);
    assert.equal(events.decisions.length, 2, 'local decisions are not timed (only the two remote ones)');
    assert.equal(events.states.length, 1);
  });

  it('gives local admissions back locally, and leaves remote ones spent while it is down', async (t) => {
    const { remote, store, breakRemote } = setup(t, 'local');
    const remoteAdmission = await store.consume(rule, 'k');
    const localAdmission = await breakRemote();
    const asked = remote.asked.length;
    await store.release(rule, 'k', remoteAdmission.token!);
    assert.equal(remote.asked.length, asked, 'not sent to the remote store while it is down');
    await store.release(rule, 'k', localAdmission.token!);
    assert.deepEqual(remaining(await store.peek(rule, 'k')), [true, 3]);
  });

  it('probes at most once per retry interval, in the background, and recovers by itself', async (t) => {
    const { clock, remote, store, log, events, breakRemote } = setup(t, 'local');
    await breakRemote();
    clock.advance(RETRY_MS - 1);
    store.consume(rule, 'k');
    assert.equal(remote.count('ping'), 0, 'not due yet');

    clock.advance(1);
    remote.hold(); // a hung server: the probe does not answer until told
    const during = store.consume(rule, 'k');
    assert.ok(!(during instanceof Promise), 'the request is decided locally, without waiting for the probe');
    store.consume(rule, 'k');
    assert.equal(remote.count('ping'), 1, 'one probe at a time');
    remote.answer(); // still down: the probe fails
    await settle();
    assert.deepEqual(
      events.errors.map(({ operation }) => operation),
      ['consume', 'ping'],
    );
    assert.equal(events.states.length, 1, 'still the same outage');

    remote.recover();
    store.consume(rule, 'k');
    assert.equal(remote.count('ping'), 1, 'the next probe waits for the interval again');
    clock.advance(RETRY_MS);
    assert.ok(!(store.consume(rule, 'k') instanceof Promise), 'this request too is decided locally');
    await settle();
    assert.equal(remote.count('ping'), 2);
    assert.deepEqual(
      events.states.map(({ state }) => state),
      ['degraded', 'recovered'],
    );
    const recovered = events.states[1]!;
    assert.ok(recovered.state === 'recovered' && recovered.downMs === 2 * RETRY_MS);
    assert.deepEqual(
      log.lines.map(({ level }) => level),
      ['warn', 'info'],
    );
    assert.match(log.lines[1]!.message, /recovered/);
    assert.ok(store.consume(rule, 'k') instanceof Promise, 'back to the remote store');
  });

  it('probes on its own every interval while no request comes, and stops once recovered', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { clock, remote, events, breakRemote } = setup(t, 'local');
    await breakRemote();
    remote.recover();
    clock.advance(RETRY_MS - 1);
    t.mock.timers.tick(RETRY_MS - 1);
    assert.equal(remote.count('ping'), 0, 'not due yet');
    clock.advance(1);
    t.mock.timers.tick(1);
    await settle();
    assert.equal(remote.count('ping'), 1, 'probed without a request');
    assert.deepEqual(
      events.states.map(({ state }) => state),
      ['degraded', 'recovered'],
    );
    clock.advance(5 * RETRY_MS);
    t.mock.timers.tick(5 * RETRY_MS);
    assert.equal(remote.count('ping'), 1, 'no probe once the remote store answers');
  });

  it('probes at once when the clock is set back', async (t) => {
    const { clock, remote, store, breakRemote } = setup(t, 'local');
    await breakRemote();
    clock.advance(-60_000);
    store.consume(rule, 'k');
    assert.equal(remote.count('ping'), 1);
  });

  it('forgets a key in both stores on reset', async (t) => {
    const { remote, store, breakRemote } = setup(t, 'local');
    await store.consume(rule, 'k');
    await breakRemote();
    await store.consume(rule, 'k');
    remote.recover();
    await store.reset(rule, 'k'); // the remote store is still considered down: only local
    assert.deepEqual(remaining(await store.peek(rule, 'k')), [true, 3]);
  });
});

describe('FailoverStore, RATE_LIMIT_STORE_FAILURE=open', () => {
  it('admits without counting while the remote store is down, saying the whole budget remains', async (t) => {
    const { store, breakRemote, readiness } = setup(t, 'open');
    const first = await breakRemote();
    assert.deepEqual(first, { allowed: true, limit: 3, remaining: 3, resetMs: 0 });
    for (let i = 0; i < 5; i++) assert.deepEqual(remaining(await store.consume(rule, 'k')), [true, 3]);
    assert.deepEqual(await readiness(), { state: 'down', fatal: false });
  });
});

describe('FailoverStore, RATE_LIMIT_STORE_FAILURE=closed', () => {
  it('fails every operation while the remote store is down, and answers again once it is back', async (t) => {
    const { clock, remote, store, readiness } = setup(t, 'closed');
    const admitted = await store.consume(rule, 'k');
    remote.fail();
    await assert.rejects(async () => store.consume(rule, 'k'), StoreUnavailableError);
    await assert.rejects(async () => store.peek(rule, 'k'), StoreUnavailableError);
    await assert.rejects(async () => store.release(rule, 'k', admitted.token!), StoreUnavailableError);
    await assert.rejects(async () => store.reset(rule, 'k'), StoreUnavailableError);
    assert.deepEqual(await readiness(), { state: 'down', fatal: true });

    remote.recover();
    assert.deepEqual(await readiness(), { state: 'down', fatal: true }, 'no probe before the interval');
    clock.advance(RETRY_MS);
    assert.deepEqual(await readiness(), { state: 'up', fatal: false }, 'readiness waits for a due probe');
    assert.deepEqual(remaining(await store.consume(rule, 'k')), [true, 1]);
  });
});

describe('FailoverStore claimOnce while the remote store is down', () => {
  for (const mode of ['local', 'open', 'closed'] as const) {
    it(`grants no claim in ${mode} mode (never locally: an id would be usable once per instance), and never throws`, async (t) => {
      const { remote, store, clock } = setup(t, mode);
      remote.fail();
      assert.equal(await store.claimOnce('work', 'series', 1, 60_000), false, 'the failing call');
      assert.equal(await store.claimOnce('work', 'series', 2, 60_000), false, 'during the outage');
      remote.recover();
      clock.advance(RETRY_MS);
      await store.claimOnce('work', 'series', 3, 60_000); // starts the probe
      await settle();
      assert.equal(await store.claimOnce('work', 'series', 2, 60_000), true, 'granted again once it is back');
    });
  }
});

describe('FailoverStore readiness', () => {
  it('a failed readiness ping starts the outage like a failed request', async (t) => {
    const { remote, events, readiness } = setup(t, 'local');
    remote.fail();
    assert.deepEqual(await readiness(), { state: 'down', fatal: false });
    assert.deepEqual(
      events.states.map(({ state }) => state),
      ['degraded'],
    );
    assert.deepEqual(await readiness(), { state: 'down', fatal: false });
    assert.equal(remote.count('ping'), 1, 'readiness probes no more often than requests do');
  });
});

describe('createStore', () => {
  it('without Redis settings: the memory store itself, nothing for /readyz, nothing to publish', async (t) => {
    const clock = new ManualClock();
    const redis = { url: null, clusterNodes: null, keyPrefix: 'x:', commandTimeoutMs: 100 };
    const stack = await createStore({ redis, failureMode: 'local' }, clock, new MemoryLog());
    t.after(() => stack.close());
    assert.deepEqual(stack.readiness, []);
    assert.deepEqual(stack.backend, { name: 'memory', failureMode: 'none' });
    const decisions: DecisionEvent[] = [];
    const stop = observeStore(stack.store, { decision: (event) => decisions.push(event) });
    t.after(stop);
    const decision = stack.store.consume(rule, 'k');
    assert.ok(!(decision instanceof Promise), 'decided synchronously');
    assert.deepEqual(decisions, []);
  });
});

describe('FailoverStore single-use marks while the remote store is down', () => {
  for (const mode of ['local', 'open'] as const) {
    it(`${mode}: marks go to the local store, and one put remotely is not found (never taken twice)`, async (t) => {
      const { remote, store } = setup(t, mode);
      await store.putOnce('challenge', 'browser', 'before', 60_000);
      remote.fail();
      assert.equal(await store.takeOnce('challenge', 'browser', 'before'), false);
      await store.putOnce('challenge', 'browser', 'during', 60_000);
      assert.equal(await store.takeOnce('challenge', 'browser', 'during'), true);
      assert.equal(await store.takeOnce('challenge', 'browser', 'during'), false);
    });
  }

  it('closed: marks fail with the store (a 503), never a silent success', async (t) => {
    const { remote, store } = setup(t, 'closed');
    remote.fail();
    await assert.rejects(async () => store.putOnce('challenge', 'b', 'm', 60_000), StoreUnavailableError);
    await assert.rejects(async () => store.takeOnce('challenge', 'b', 'm'), StoreUnavailableError);
  });
});
