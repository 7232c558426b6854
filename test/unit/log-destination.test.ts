// The batched stdout: lines reach sonic-boom as one string per full batch, in order, and nothing waits past a flush interval.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type pino from 'pino';
import { BatchedStdout, LOG_BATCH_BYTES, LOG_FLUSH_INTERVAL_MS } from '../../src/log-destination.ts';

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

describe('BatchedStdout', () => {
  it('holds lines until a batch is full, then hands sonic-boom the batch as one string, in order', () => {
    const { calls, out } = fakeSonicBoom();
    const stdout = new BatchedStdout(out);
    // Lines of 100 characters: the batch is full at its 82nd line.
    const lines = Array.from({ length: 85 }, (_, i) => `${`${i}`.padEnd(99, '.')}\n`);
    const full = Math.ceil(LOG_BATCH_BYTES / 100);
    for (const line of lines.slice(0, full - 1)) stdout.write(line);
    assert.deepEqual(calls, [], 'a part batch waits');
    stdout.write(lines[full - 1]!);
    assert.deepEqual(calls, [`write ${lines.slice(0, full).join('')}`], 'the full batch, once');
    for (const line of lines.slice(full)) stdout.write(line);
    stdout.flushSync();
    assert.deepEqual(calls.slice(1), [`write ${lines.slice(full).join('')}`, 'flushSync']);
  });

  it('writes a part batch a flush interval after its first line, and sets no timer while idle', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { calls, out } = fakeSonicBoom();
    const stdout = new BatchedStdout(out);
    stdout.write('a\n');
    t.mock.timers.tick(LOG_FLUSH_INTERVAL_MS / 2);
    stdout.write('b\n');
    t.mock.timers.tick(LOG_FLUSH_INTERVAL_MS / 2 - 1);
    assert.deepEqual(calls, []);
    t.mock.timers.tick(1);
    assert.deepEqual(calls, ['write a\nb\n'], 'both lines, one write, 100 ms after the first');
    t.mock.timers.tick(10 * LOG_FLUSH_INTERVAL_MS);
    assert.deepEqual(calls, ['write a\nb\n'], 'nothing more while idle');
    stdout.write('c\n');
    t.mock.timers.tick(LOG_FLUSH_INTERVAL_MS);
    assert.deepEqual(calls, ['write a\nb\n', 'write c\n']);
  });

  it('writes what is pending at once on flushSync (shutdown, exit)', () => {
    const { calls, out } = fakeSonicBoom();
    const stdout = new BatchedStdout(out);
    stdout.write('last words\n');
    stdout.flushSync();
    assert.deepEqual(calls, ['write last words\n', 'flushSync']);
  });

  it('keeps serving when stdout is gone', () => {
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
    assert.doesNotThrow(() => stdout.write('x'.repeat(LOG_BATCH_BYTES)));
    stdout.write('a\n');
    assert.doesNotThrow(() => stdout.flushSync());
  });
});
