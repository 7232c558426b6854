// The hashing gate's scheduling, pure: a hand-moved clock and checks that end when the test says.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HashGate, SHARED, type Ticket } from '../../src/auth/hash-gate.ts';
import { ManualClock } from '../../src/clock.ts';

const admitted = (gate: HashGate, place = SHARED): Ticket => {
  const admission = gate.enter(place);
  assert.equal(admission.shed, false);
  return (admission as { ticket: Ticket }).ticket;
};

/** Runs one check of `ms` on a granted ticket and frees its slot. */
async function check(clock: ManualClock, ticket: Ticket, ms: number): Promise<void> {
  assert.deepEqual(await ticket.turn, { shed: false });
  await ticket.run(async () => clock.advance(ms));
  ticket.close();
}

describe('HashGate', () => {
  it('runs at most `concurrency` checks and grants the next slot as one ends', async () => {
    const clock = new ManualClock();
    const gate = new HashGate({ concurrency: 2, maxWaitMs: 1000, clock });
    const [a, b, c] = [admitted(gate), admitted(gate), admitted(gate)];
    assert.deepEqual(gate.state().queued, { known: 0, shared: 1 });
    assert.equal(gate.state().running, 2);
    await check(clock, a, 40);
    assert.equal(gate.state().running, 2, 'c took a’s slot');
    await check(clock, b, 40);
    await check(clock, c, 40);
    assert.equal(gate.state().running, 0);
    assert.equal(gate.state().checkMs, 40);
  });

  it('estimates the wait from measured checks and sheds a newcomer over the bound, with Retry-After', async () => {
    const clock = new ManualClock();
    const gate = new HashGate({ concurrency: 2, maxWaitMs: 100, clock, initialCheckMs: 50 });
    const sheds: string[] = [];
    gate.observe({ shed: (reason) => sheds.push(reason) });
    const tickets = [admitted(gate), admitted(gate)]; // running
    tickets.push(admitted(gate), admitted(gate), admitted(gate)); // waits of 25, 50, 75… ms
    assert.equal(gate.expectedWaitMs(), 100);
    tickets.push(admitted(gate));
    assert.equal(gate.expectedWaitMs(), 125);
    assert.deepEqual(gate.enter(SHARED), { shed: true });
    assert.deepEqual(sheds, ['expected-wait']);
    // A slower check measured: the estimate follows it, smoothed (50 + 0.2 × (90 − 50)).
    await check(clock, tickets[0]!, 90);
    assert.equal(gate.state().checkMs, 58);
    assert.deepEqual(gate.state().queued, { known: 0, shared: 3 });
    assert.equal(gate.expectedWaitMs(), 116);
    assert.deepEqual(gate.enter(SHARED), { shed: true });
  });

  it('holds a shed answer until the bound has passed on its clock, then gives the seconds to come back after', async () => {
    const clock = new ManualClock();
    const gate = new HashGate({ concurrency: 1, maxWaitMs: 1000, clock, initialCheckMs: 700 });
    const running = admitted(gate);
    admitted(gate); // the next one waits 700 ms
    assert.deepEqual(gate.enter(SHARED), { shed: true }); // 1,400 ms expected: over the bound
    let answered: number | null = null;
    void gate.hold().then((retryAfter) => {
      answered = retryAfter;
    });
    assert.equal(gate.state().held, 1);
    clock.advance(999);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, null, 'still held before the bound');
    clock.advance(1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, 2, 'two checks of 700 ms ahead of a newcomer now: 1.4 s, rounded up');
    assert.equal(gate.state().held, 0);
    await check(clock, running, 10);
  });

  it('sheds a waiting shared attempt once it has waited the bound, at the next event', async () => {
    const clock = new ManualClock();
    const gate = new HashGate({ concurrency: 1, maxWaitMs: 100, clock });
    const running = admitted(gate);
    const waiting = admitted(gate);
    clock.advance(101);
    assert.deepEqual(gate.state().queued, { known: 0, shared: 0 });
    assert.deepEqual(await waiting.turn, { shed: true, retryAfter: 1 });
    await check(clock, running, 10);
  });

  it('lets a waiting attempt leave without a check, and never sheds the known lane', async () => {
    const clock = new ManualClock();
    const gate = new HashGate({ concurrency: 1, maxWaitMs: 100, clock });
    const running = admitted(gate);
    const leaving = admitted(gate);
    const known = admitted(gate, { lane: 'known', account: '1' });
    leaving.close(); // refused by a rate limit while it waited
    assert.deepEqual(gate.state().queued, { known: 1, shared: 0 });
    clock.advance(10_000);
    assert.deepEqual(
      gate.state().queued,
      { known: 1, shared: 0 },
      'a known device waits as long as it takes',
    );
    await check(clock, running, 10);
    await check(clock, known, 10);
    assert.equal(gate.state().running, 0);
  });

  it('keeps its shared line compact through long floods', async () => {
    const clock = new ManualClock();
    const gate = new HashGate({ concurrency: 1, maxWaitMs: 100_000, clock });
    let previous = admitted(gate);
    for (let i = 0; i < 5000; i++) {
      const next = admitted(gate);
      await check(clock, previous, 0);
      previous = next;
    }
    await check(clock, previous, 0);
    assert.deepEqual(gate.state(), {
      concurrency: 1,
      running: 0,
      queued: { known: 0, shared: 0 },
      held: 0,
      checkMs: 0,
      askedBits: 0,
    });
  });
});
