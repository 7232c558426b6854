// The batched stdout: a loop turn's lines reach sonic-boom as one string, in order, and nothing waits past a flush.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type pino from 'pino';
import { BatchedStdout, LOG_FLUSH_INTERVAL_MS } from '../../src/log-destination.ts';

type SonicBoom = ReturnType<typeof pino.destination>;

/** Records what the batcher hands to sonic-boom, and when it asks for a flush. */
function fakeSonicBoom() {
  const calls: string[] = [];
  const out = {
    write(chunk: string) {
      calls.push(`write ${chunk}`);
      return true;
    },
    flush() {
      calls.push('flush');
    },
    flushSync() {
      calls.push('flushSync');
    },
  };
  return { calls, out: out as unknown as SonicBoom };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('BatchedStdout', () => {
  it('hands the lines of one loop turn to sonic-boom as one string, in order', async () => {
    const { calls, out } = fakeSonicBoom();
    const stdout = new BatchedStdout(out);
    stdout.write('a\n');
    stdout.write('b\n');
    stdout.write('c\n');
    assert.deepEqual(calls, [], 'nothing is written during the turn');
    await nextTurn();
    assert.deepEqual(calls, ['write a\nb\nc\n']);
    stdout.write('d\n');
    await nextTurn();
    assert.deepEqual(calls, ['write a\nb\nc\n', 'write d\n']);
    stdout.flushSync();
  });

  it('flushes a part batch once, a flush interval after lines were written', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { calls, out } = fakeSonicBoom();
    const stdout = new BatchedStdout(out);
    stdout.write('a\n');
    await nextTurn();
    stdout.write('b\n');
    await nextTurn();
    t.mock.timers.tick(LOG_FLUSH_INTERVAL_MS - 1);
    assert.deepEqual(calls, ['write a\n', 'write b\n']);
    t.mock.timers.tick(1);
    assert.deepEqual(calls, ['write a\n', 'write b\n', 'flush'], 'one flush for both turns');
    t.mock.timers.tick(10 * LOG_FLUSH_INTERVAL_MS);
    assert.equal(calls.filter((call) => call === 'flush').length, 1, 'no timer while idle');
  });

  it('writes what is pending at once on flushSync (shutdown, exit)', () => {
    const { calls, out } = fakeSonicBoom();
    const stdout = new BatchedStdout(out);
    stdout.write('last words\n');
    stdout.flushSync();
    assert.deepEqual(calls, ['write last words\n', 'flushSync']);
  });

  it('keeps serving when stdout is gone', async () => {
    const stdout = new BatchedStdout({
      write() {
        throw new Error('SonicBoom destroyed');
      },
      flush() {
        throw new Error('SonicBoom destroyed');
      },
      flushSync() {
        throw new Error('SonicBoom destroyed');
      },
    } as unknown as SonicBoom);
    stdout.write('a\n');
    await nextTurn();
    assert.doesNotThrow(() => stdout.flushSync());
  });
});
