// The shared lane ordered by proved work (docs/rules.md#proved-work), on a hand-moved clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { WORK_WINDOW_MS } from '../../src/login/asked-bits.ts';
import { LoginGate, type ShedReason, type Ticket } from '../../src/login/login-gate.ts';

const shared = (work: number) => ({ lane: 'shared', work }) as const;

function admitted(gate: LoginGate, work = 0): Ticket {
  const admission = gate.enter(shared(work));
  assert.equal(admission.shed, false, `an attempt with ${work} bits was shed`);
  return (admission as { ticket: Ticket }).ticket;
}

/** A gate with one slot, checks of 50 ms, a bound of 100 ms: one running, then room for one waiting. */
function busyGate() {
  const clock = new ManualClock();
  const gate = new LoginGate({ concurrency: 1, maxWaitMs: 100, clock, initialCheckMs: 50 });
  const sheds: [ShedReason, number][] = [];
  const grants: number[] = [];
  gate.observe({
    shed: (reason, work) => sheds.push([reason, work]),
    granted: (lane, _wait, work) => {
      if (lane === 'shared') grants.push(work);
    },
  });
  return { clock, gate, sheds, grants };
}

/** Runs one check of `ms` on a granted ticket and frees its slot. */
async function check(clock: ManualClock, ticket: Ticket, ms = 50): Promise<void> {
  assert.deepEqual(await ticket.turn, { shed: false });
  await ticket.run(async () => clock.advance(ms));
  ticket.close();
}

describe('LoginGate: the shared lane by proved work', () => {
  it('serves the most work first, then the oldest of equal work', async () => {
    const clock = new ManualClock();
    const gate = new LoginGate({ concurrency: 1, maxWaitMs: 10_000, clock, initialCheckMs: 50 });
    const order: string[] = [];
    const tickets = new Map<string, Ticket>();
    const enter = (name: string, work: number) => {
      const ticket = admitted(gate, work);
      tickets.set(name, ticket);
      void ticket.turn.then((turn) => {
        if (!turn.shed) order.push(name);
      });
    };
    enter('running', 0);
    for (const [name, work] of [
      ['none', 0],
      ['three', 3],
      ['one', 1],
      ['three again', 3],
    ] as const)
      enter(name, work);
    for (let i = 0; i < tickets.size; i++) {
      await new Promise(setImmediate);
      await check(clock, tickets.get(order.at(-1)!)!);
    }
    assert.deepEqual(order, ['running', 'three', 'three again', 'one', 'none']);
  });

  it('counts only the attempts with at least as much work ahead of a newcomer', () => {
    const { gate, sheds } = busyGate();
    admitted(gate, 0); // running
    admitted(gate, 0); // waiting: a newcomer without work would expect 2 × 50 ms
    assert.equal(gate.expectedWaitMs(0), 100);
    admitted(gate, 0); // at 100 ms: still within the bound
    assert.equal(gate.expectedWaitMs(0), 150);
    assert.equal(gate.expectedWaitMs(1), 50, 'nothing that proved a bit is ahead of one bit');
    assert.deepEqual(gate.enter(shared(0)), { shed: true });
    assert.deepEqual(sheds, [['expected-wait', 0]]);
  });

  it('admits an attempt with more work into a full line and sheds the newest of the least work instead', async () => {
    const { gate, sheds } = busyGate();
    admitted(gate, 0); // running
    const older = admitted(gate, 0);
    const newer = admitted(gate, 0);
    assert.deepEqual(gate.enter(shared(0)), { shed: true }, 'the line is full for no work');
    const worker = admitted(gate, 2);
    assert.deepEqual(gate.state().queued.shared, 2);
    const turn = await newer.turn;
    assert.equal(turn.shed, true, 'the newest attempt without work made room');
    assert.deepEqual(sheds, [
      ['expected-wait', 0],
      ['displaced', 0],
    ]);
    assert.equal(await Promise.race([older.turn.then(() => 'answered'), Promise.resolve('waits')]), 'waits');
    worker.close();
  });

  it('sheds a waiting attempt of any work once it has waited the bound', async () => {
    const { clock, gate, sheds } = busyGate();
    const running = admitted(gate, 0);
    const waiting = admitted(gate, 5);
    clock.advance(101);
    assert.equal(gate.state().queued.shared, 0);
    assert.deepEqual(await waiting.turn, { shed: true, retryAfter: 1 });
    assert.deepEqual(sheds, [['deadline', 5]]);
    await check(clock, running);
  });

  it('asks for no work without pressure, and one bit more than the least work admitted lately under it', async () => {
    const { clock, gate, grants } = busyGate();
    assert.equal(gate.askedBits(), 0, 'no shed yet');
    /** One running and two waiting, all proving `work`, and a newcomer without work shed; then all checked. */
    const fullLine = async (work: number) => {
      const line = [admitted(gate, work), admitted(gate, work), admitted(gate, work)];
      assert.deepEqual(gate.enter(shared(0)), { shed: true });
      const pressure = gate.askedBits();
      for (const ticket of line) await check(clock, ticket);
      return pressure;
    };
    assert.equal(await fullLine(0), 1, 'under pressure with nothing admitted yet: one bit');
    assert.equal(gate.askedBits(), 1, 'the least admitted is 0 bits');
    clock.advance(WORK_WINDOW_MS / 2);
    await fullLine(3);
    assert.equal(gate.askedBits(), 1, 'the 0 bits of the last half-window still count');
    clock.advance(WORK_WINDOW_MS / 2);
    await fullLine(3);
    assert.equal(gate.askedBits(), 4, 'only 3 bits were admitted lately');
    assert.deepEqual(grants, [0, 0, 0, 3, 3, 3, 3, 3, 3]);
    clock.advance(WORK_WINDOW_MS + 1);
    assert.equal(gate.askedBits(), 0, 'no shed for a whole window: no pressure, no work asked');
    assert.equal(gate.state().askedBits, 0);
  });
});
