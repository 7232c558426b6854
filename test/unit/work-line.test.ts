// The shared lane's line by proved work: what it keeps in memory once its attempts have left.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WorkLine } from '../../src/login/work-line.ts';

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
});
