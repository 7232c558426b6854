// The hashing gate's scheduling, pure: a hand-moved clock and checks that end when the test says.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../src/clock.ts';
import { LoginGate, MAX_WAITING_PER_ACCOUNT, SHARED, type Ticket } from '../../src/login/login-gate.ts';

const admitted = (gate: LoginGate, place = SHARED): Ticket => {
  const admission = gate.enter(place);
  assert.equal(admission.shed, false);
  const { ticket } = admission as { ticket: Ticket | null };
  assert.ok(ticket, 'a place in the queue');
  return ticket;
};

const known = (account: string) => ({ lane: 'known', account }) as const;

/** Runs one check of `ms` on a granted ticket and frees its slot. */
async function check(clock: ManualClock, ticket: Ticket, ms: number): Promise<void> {
  assert.deepEqual(await ticket.turn, { shed: false });
  await ticket.run(async () => clock.advance(ms));
  ticket.close();
}

describe('LoginGate', () => {
  it('runs at most `concurrency` checks and grants the next slot as one ends', async () => {
    const clock = new ManualClock();
    const gate = new LoginGate({ concurrency: 2, maxWaitMs: 1000, clock });
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
    const gate = new LoginGate({ concurrency: 2, maxWaitMs: 100, clock, initialCheckMs: 50 });
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
    const gate = new LoginGate({ concurrency: 1, maxWaitMs: 1000, clock, initialCheckMs: 700 });
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
    const gate = new LoginGate({ concurrency: 1, maxWaitMs: 100, clock });
    const running = admitted(gate);
    const waiting = admitted(gate);
    clock.advance(101);
    assert.deepEqual(gate.state().queued, { known: 0, shared: 0 });
    assert.deepEqual(await waiting.turn, { shed: true, retryAfter: 1 });
    await check(clock, running, 10);
  });

  it('lets a waiting attempt leave without a check, and never sheds the known lane', async () => {
    const clock = new ManualClock();
    const gate = new LoginGate({ concurrency: 1, maxWaitMs: 100, clock });
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
    const gate = new LoginGate({ concurrency: 1, maxWaitMs: 100_000, clock });
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

  it('counts one account’s known-device backlog as one slot at most: a shared newcomer behind it is not shed', async () => {
    const clock = new ManualClock();
    const gate = new LoginGate({ concurrency: 2, maxWaitMs: 100, clock, initialCheckMs: 50 });
    // An insider's own account: one check running, its backlog waiting behind it on that slot.
    const bob = Array.from({ length: 1 + MAX_WAITING_PER_ACCOUNT }, () => admitted(gate, known('bob')));
    assert.deepEqual(gate.state(), {
      concurrency: 2,
      running: 1,
      queued: { known: MAX_WAITING_PER_ACCOUNT, shared: 0 },
      held: 0,
      checkMs: 50,
      askedBits: 0,
    });
    assert.equal(gate.expectedWaitMs(), 0, 'the other slot is free: bob’s backlog cannot use it');
    const carol = admitted(gate);
    assert.deepEqual(await carol.turn, { shed: false }, 'carol runs at once, beside bob');
    // Both slots busy: a newcomer waits for one check end (of 2 slots), bob’s backlog adds nothing.
    assert.equal(gate.expectedWaitMs(), 25);
    // Another account waiting for a slot is one check ahead, however many attempts it has.
    const dave = [admitted(gate, known('dave')), admitted(gate, known('dave'))];
    assert.equal(gate.expectedWaitMs(), 50);
    await check(clock, carol, 50); // carol's slot goes to dave (known lane first); his second waits behind him
    assert.equal(gate.expectedWaitMs(), 25);
    dave[1]!.close();
    await check(clock, dave[0]!, 50);
    assert.equal(gate.expectedWaitMs(), 0);
    for (const ticket of bob) await check(clock, ticket, 50);
    assert.equal(gate.state().running, 0);
  });

  it('gives one account’s unknown-device attempts one place in the shared line: a newcomer of another account is not shed for them', async () => {
    const clock = new ManualClock();
    const gate = new LoginGate({ concurrency: 2, maxWaitMs: 1000, clock, initialCheckMs: 50 });
    const shared = (account: string) => ({ lane: 'shared', account }) as const;
    // Bob's browsers beyond his account's known devices are unknown ones: one in a check, the rest behind it.
    const bob = Array.from({ length: 1 + MAX_WAITING_PER_ACCOUNT }, () => admitted(gate, shared('bob')));
    assert.equal(gate.state().running, 1, 'one check of bob’s at a time');
    assert.deepEqual(gate.state().queued, { known: 0, shared: MAX_WAITING_PER_ACCOUNT });
    assert.equal(gate.expectedWaitMs(), 0, 'the other slot is free: bob’s backlog cannot use it');
    // More of bob's are refused at once, without a place (429 in the route), not queued.
    assert.deepEqual(gate.enter(shared('bob')), { shed: false, ticket: null, retryAfter: 1 });
    const carol = admitted(gate, shared('carol'));
    assert.deepEqual(await carol.turn, { shed: false }, 'carol runs at once, beside bob');
    // Both slots busy: dave waits for one check end; bob's backlog adds nothing.
    assert.equal(gate.expectedWaitMs(), 25);
    const dave = admitted(gate, shared('dave'));
    await check(clock, carol, 50);
    assert.deepEqual(await dave.turn, { shed: false }, 'carol’s slot went to dave, not to bob’s backlog');
    await check(clock, dave, 50);
    for (const ticket of bob) await check(clock, ticket, 50);
    assert.equal(gate.state().running, 0);
    assert.deepEqual(gate.state().queued, { known: 0, shared: 0 });
  });

  it('sheds an attempt behind its own account’s when that wait is past the bound; one behind takes its place in line when its account’s attempt is done', async () => {
    const clock = new ManualClock();
    const gate = new LoginGate({ concurrency: 1, maxWaitMs: 100, clock, initialCheckMs: 50 });
    const shared = (account: string) => ({ lane: 'shared', account }) as const;
    const first = admitted(gate, shared('bob'));
    const behind = admitted(gate, shared('bob')); // waits 50 ms for first's check
    const alice = admitted(gate, shared('alice')); // in line: now bob's next would wait past the bound
    assert.deepEqual(gate.enter(shared('bob')), { shed: true });
    clock.advance(150); // the first check takes long: alice has waited the line's bound
    await check(clock, first, 0);
    assert.equal((await alice.turn).shed, true, 'alice waited in line past the bound');
    alice.close();
    // Bob's next one entered the line when his first was done: its bound counts from then.
    assert.deepEqual(await behind.turn, { shed: false });
    await check(clock, behind, 50);
    assert.deepEqual(gate.state().queued, { known: 0, shared: 0 });
  });

  it('refuses an account’s attempt at once once MAX_WAITING_PER_ACCOUNT wait, without a place in the queue', async () => {
    const clock = new ManualClock();
    const gate = new LoginGate({ concurrency: 1, maxWaitMs: 100, clock, initialCheckMs: 50 });
    const bob = Array.from({ length: 1 + MAX_WAITING_PER_ACCOUNT }, () => admitted(gate, known('bob')));
    assert.deepEqual(gate.enter(known('bob')), { shed: false, ticket: null, retryAfter: 1 });
    assert.equal(gate.state().queued.known, MAX_WAITING_PER_ACCOUNT, 'the refused one took no place');
    // Another account is not refused for bob's backlog.
    const alice = admitted(gate, known('alice'));
    // Once bob's running check ends, alice's turn comes: she arrived while it ran.
    await check(clock, bob[0]!, 50);
    await check(clock, alice, 50);
    // Then bob's next check runs and one of his waits no more: a new attempt of his has a place again.
    const again = admitted(gate, known('bob'));
    for (const ticket of [...bob.slice(1), again]) await check(clock, ticket, 50);
    assert.equal(gate.state().running, 0);
  });

  it('never lets one account’s backlog hold the only slot: a shared attempt gets the slot after its running check', async () => {
    const clock = new ManualClock();
    const gate = new LoginGate({ concurrency: 1, maxWaitMs: 1000, clock, initialCheckMs: 50 });
    const sheds: string[] = [];
    gate.observe({ shed: (reason) => sheds.push(reason) });
    // An insider keeps his own account's backlog full: one running, MAX_WAITING_PER_ACCOUNT behind.
    const bob = Array.from({ length: 1 + MAX_WAITING_PER_ACCOUNT }, () => admitted(gate, known('bob')));
    const carol = admitted(gate);
    assert.equal(gate.expectedWaitMs(), 100, 'carol, then the newcomer: bob’s running check and carol’s');
    let carolsTurn: unknown;
    void carol.turn.then((turn) => {
      carolsTurn = turn;
    });
    await check(clock, bob.shift()!, 50);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(carolsTurn, { shed: false }, 'the slot went to carol, not to bob’s backlog');
    await check(clock, carol, 50);
    // Bob's backlog goes on, and each newcomer of the shared lane gets the slot after his running check.
    for (let round = 0; round < 20; round++) {
      const dave = admitted(gate);
      await check(clock, bob.shift()!, 50);
      bob.push(admitted(gate, known('bob')));
      await check(clock, dave, 50);
    }
    assert.deepEqual(sheds, []);
    // Alice, a known device of her own account, still goes before the shared lane and bob's next.
    const erin = admitted(gate);
    const alice = admitted(gate, known('alice'));
    await check(clock, bob.shift()!, 50);
    await check(clock, alice, 50);
    await check(clock, bob.shift()!, 50);
    await check(clock, erin, 50);
    for (const ticket of bob) await check(clock, ticket, 50);
    assert.equal(gate.state().running, 0);
  });

  it('keeps its count of waiting accounts in step with the queues, whatever the order of events', () => {
    // The estimate reads a count kept as attempts come and go; a walk of the queues must agree with it.
    const step = fc.oneof(
      fc.record({ op: fc.constant('enter' as const), account: fc.constantFrom('a', 'b', 'c', null) }),
      fc.record({ op: fc.constantFrom('close' as const, 'closeWaiting' as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(step, { maxLength: 60 }), (concurrency, steps) => {
        const clock = new ManualClock();
        const gate = new LoginGate({ concurrency, maxWaitMs: 1e9, clock, initialCheckMs: 10 });
        const open: { ticket: Ticket; account: string | null; running: boolean }[] = [];
        for (const s of steps) {
          if (s.op === 'enter') {
            const admission = gate.enter(s.account === null ? SHARED : known(s.account));
            if (!admission.shed && admission.ticket)
              open.push({ ticket: admission.ticket, account: s.account, running: false });
          } else {
            const candidates = open.filter((o) => o.running === (s.op === 'close'));
            const chosen = candidates[s.pick % Math.max(1, candidates.length)];
            if (chosen) {
              chosen.ticket.close();
              open.splice(open.indexOf(chosen), 1);
            }
          }
          // Which tickets hold a slot: the gate resolves their turn synchronously in its state.
          for (const o of open) o.running = (o.ticket as unknown as { state: string }).state === 'running';
          const queued = open.filter((o) => !o.running);
          const runningAccounts = new Set(open.filter((o) => o.running).map((o) => o.account));
          const waitingAccounts = new Set(
            queued.filter((o) => o.account !== null && !runningAccounts.has(o.account)).map((o) => o.account),
          );
          const ahead = waitingAccounts.size + queued.filter((o) => o.account === null).length;
          const running = open.length - queued.length;
          const expected = running + ahead < concurrency ? 0 : ((ahead + 1) * 10) / concurrency;
          assert.equal(gate.expectedWaitMs(), expected);
        }
      }),
    );
  });
});
