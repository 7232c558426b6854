// The decisions' shared deadline: an unanswered command fails at its own deadline, an answered one never.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { Command } from 'ioredis';
import { CommandDeadlines } from '../../src/rate-limit/stores/command-deadlines.ts';

const TIMEOUT_MS = 100;

/** What the deadlines read of a command: whether it settled, and how to fail it. */
class FakeCommand {
  isSettled = false;
  failure: Error | null = null;
  answer(): void {
    this.isSettled = true;
  }
  reject(error: Error): void {
    assert.equal(this.isSettled, false, 'a settled command is never failed');
    this.isSettled = true;
    this.failure = error;
  }
}

const failureOf = (command: FakeCommand): string | null => command.failure?.message ?? null;

describe('CommandDeadlines', () => {
  let now = 0;
  let deadlines: CommandDeadlines;
  /**
   * Moves the injected clock and the mocked timers together, then lets one real setImmediate run:
   * a due deadline fails its commands only after the sockets were polled once more.
   */
  const advance = async (ms: number) => {
    now += ms;
    mock.timers.tick(ms);
    await new Promise(setImmediate);
  };
  const track = () => {
    const command = new FakeCommand();
    deadlines.track(command as unknown as Command);
    return command;
  };

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout'] });
    now = 0;
    deadlines = new CommandDeadlines(TIMEOUT_MS, () => now);
  });
  afterEach(() => mock.timers.reset());

  it('fails a command Redis has not answered at its deadline, not a millisecond before', async () => {
    const command = track();
    await advance(TIMEOUT_MS - 1);
    assert.equal(failureOf(command), null);
    await advance(1);
    assert.equal(failureOf(command), 'Command timed out');
  });

  it('polls the sockets once after a deadline is due: an answer read then is not failed', async () => {
    const command = track();
    now += TIMEOUT_MS;
    mock.timers.tick(TIMEOUT_MS); // the deadline's timer ran
    command.answer(); // the answer waiting in the socket, read by the poll before setImmediate
    await new Promise(setImmediate);
    assert.equal(command.failure, null);
    assert.equal(deadlines.tracked, 0);
  });

  it('never fails a command that was answered, and forgets it', async () => {
    const answered = track();
    answered.answer();
    const later = track();
    assert.equal(deadlines.tracked, 1, 'the answered command was dropped as the next one came');
    later.answer();
    await advance(TIMEOUT_MS * 3);
    assert.equal(answered.failure, null);
    assert.equal(later.failure, null);
    assert.equal(deadlines.tracked, 0);
  });

  it('fails each command at its own deadline, oldest first', async () => {
    const first = track();
    await advance(30);
    const second = track();
    await advance(30);
    const third = track();
    await advance(TIMEOUT_MS - 60);
    assert.ok(first.failure && !second.failure && !third.failure);
    await advance(29);
    assert.equal(second.failure, null);
    await advance(1);
    assert.ok(second.failure && !third.failure);
    await advance(30);
    assert.ok(third.failure);
    assert.equal(deadlines.tracked, 0);
  });

  it('leaves a command answered out of order (another cluster node) alone behind one that is late', async () => {
    const late = track();
    await advance(10);
    const quick = track();
    quick.answer();
    await advance(TIMEOUT_MS);
    assert.ok(late.failure);
    assert.equal(quick.failure, null);
    assert.equal(deadlines.tracked, 0);
  });

  it('holds thousands in flight (the ring grows) and fails exactly the unanswered ones', async () => {
    const commands: FakeCommand[] = [];
    for (let i = 0; i < 5000; i++) {
      const command = track();
      if (i % 3 === 0) command.answer();
      if (i % 1000 === 999) await advance(1);
      commands.push(command);
    }
    await advance(TIMEOUT_MS);
    commands.forEach((command, i) => {
      assert.equal(command.failure !== null, i % 3 !== 0, `command ${i}`);
    });
    assert.equal(deadlines.tracked, 0);
  });

  it('keeps working after the ring emptied: a new command gets a new timer', async () => {
    track().answer();
    await advance(TIMEOUT_MS);
    const next = track();
    await advance(TIMEOUT_MS);
    assert.ok(next.failure);
  });
});

describe('CommandDeadlines on the real event loop', () => {
  it('fails a command at its deadline when nothing else wakes the process', async () => {
    // A far timer keeps the process alive without waking it: the loop sleeps in its poll until
    // then, unless the deadline's own work keeps it awake (an unref'd setImmediate does not).
    const keepAlive = setTimeout(() => {}, 20_000);
    try {
      const deadlines = new CommandDeadlines(20);
      const started = performance.now();
      const failedAfter = new Promise<number>((resolve) => {
        const command = new FakeCommand();
        command.reject = () => resolve(performance.now() - started);
        deadlines.track(command as unknown as Command);
      });
      const elapsed = await failedAfter;
      assert.ok(
        elapsed < 1_000,
        `the command failed after ${Math.round(elapsed)} ms, not at its 20 ms deadline`,
      );
    } finally {
      clearTimeout(keepAlive);
    }
  });
});
