// The shared lane's line by proved work: what it keeps in memory once its attempts have left.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { HashGate, SHARED, type Ticket } from '../../src/auth/hash-gate.ts';
import { WorkLine } from '../../src/auth/work-line.ts';
import { ManualClock } from '../../src/clock.ts';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

interface Entry {
  readonly work: number;
  readonly queuedAt: number;
  state: string;
}

/**
 * Queues `count` attempts of no work and serves them one by one as the gate does (the best is
 * granted, its state changes, the line is told); returns weak references to them. A function of
 * its own, so that no variable of the test's suspended async frame still holds one.
 */
function fillAndServe(line: WorkLine<Entry>, count: number): WeakRef<Entry>[] {
  const refs: WeakRef<Entry>[] = [];
  for (let i = 0; i < count; i++) {
    const entry: Entry = { work: 0, queuedAt: i, state: 'queued' };
    refs.push(new WeakRef(entry));
    line.push(entry);
  }
  for (let i = 0; i < count; i++) {
    const entry = line.best()!;
    assert.equal(entry.queuedAt, i);
    entry.state = 'running';
    line.left(entry);
  }
  return refs;
}

/** The live heap after full collections (the weak-reference jobs of the turn drained first). */
async function liveHeap(): Promise<number> {
  await new Promise(setImmediate);
  collect();
  collect();
  return getHeapStatistics().used_heap_size;
}

/** More attempts than any bound a line could keep by accident: it must let go of them as it goes. */
const FLOOD = 300_000;
const MiB = 1024 * 1024;

describe('WorkLine', () => {
  it('lets go of every attempt once none of its bits waits, also the last ones served', async () => {
    const line = new WorkLine<Entry>();
    const refs = fillAndServe(line, 3);
    assert.equal(line.size, 0);
    assert.equal(line.best(), null);
    await new Promise(setImmediate); // WeakRefs hold their targets until the job that made them ends
    collect();
    assert.deepEqual(
      refs.map((ref) => ref.deref() === undefined),
      [true, true, true],
      'no attempt that left is still held by the line',
    );
  });

  it('keeps serving in order after a bucket was emptied and filled again', () => {
    const line = new WorkLine<Entry>();
    const take = () => {
      const entry = line.best()!;
      entry.state = 'running';
      line.left(entry);
      return entry.queuedAt;
    };
    line.push({ work: 2, queuedAt: 1, state: 'queued' });
    assert.equal(take(), 1);
    line.push({ work: 2, queuedAt: 2, state: 'queued' });
    line.push({ work: 2, queuedAt: 3, state: 'queued' });
    assert.deepEqual([take(), take()], [2, 3]);
    assert.equal(line.best(), null);
  });

  it('lets go of served attempts while its bucket never empties: the held count stays flat', async () => {
    const line = new WorkLine<Entry>();
    // Two attempts always wait; each turn one more comes and the oldest is served, so the bucket of
    // no work never empties (a flood that keeps the lane busy for hours).
    let arrived = 0;
    const arrive = () => line.push({ work: 0, queuedAt: arrived++, state: 'queued' });
    const serve = () => {
      const entry = line.best()!;
      assert.equal(entry.queuedAt, arrived - 3, 'served in arrival order');
      entry.state = 'running';
      line.left(entry);
    };
    arrive();
    arrive();
    let most = 0;
    let before = 0;
    for (let served = 0; served < FLOOD; served++) {
      arrive();
      serve();
      most = Math.max(most, line.held);
      if (served === FLOOD / 3) before = await liveHeap();
    }
    const grown = (await liveHeap()) - before;
    assert.equal(line.size, 2);
    assert.ok(most <= 4096, `the line held ${most} attempts with 3 waiting at most`);
    assert.ok(
      grown < 2 * MiB,
      `the live heap grew by ${(grown / MiB).toFixed(1)} MiB while attempts were served`,
    );
  });
});

describe('HashGate under a flood that never lets its line empty', () => {
  it('holds a flat heap however many attempts it serves', async () => {
    const clock = new ManualClock();
    // One slot, a bound nothing reaches: every attempt is admitted, checked and done, and three wait.
    const gate = new HashGate({ concurrency: 1, maxWaitMs: 60_000, clock, initialCheckMs: 1 });
    const enter = (): Ticket => {
      const admission = gate.enter(SHARED);
      assert.ok(!admission.shed && admission.ticket);
      return admission.ticket;
    };
    const tickets = [enter(), enter(), enter(), enter()];
    let before = 0;
    for (let served = 0; served < FLOOD; served++) {
      const running = tickets.shift()!;
      assert.deepEqual(await running.turn, { shed: false });
      running.close();
      tickets.push(enter());
      if (served === FLOOD / 3) before = await liveHeap();
    }
    const grown = (await liveHeap()) - before;
    assert.deepEqual(gate.state().queued, { known: 0, shared: 3 });
    assert.ok(
      grown < 2 * MiB,
      `the live heap grew by ${(grown / MiB).toFixed(1)} MiB while attempts were served`,
    );
    for (const ticket of tickets) ticket.close();
  });
});
