// One timer for the deadlines of every Redis command in flight, instead of one per command.
import type { Command } from 'ioredis';

const INITIAL_CAPACITY = 256;

/**
 * Fails a command that Redis has not answered within the store's timeout, as ioredis'
 * `commandTimeout` would, without its cost: ioredis arms a timer per command and, when the answer
 * comes, clears it and `delete`s the field that held it, which turns every command object into a
 * slow dictionary (measured: BENCHMARKS.md).
 *
 * Every command has the same timeout, so deadlines come in the order commands are sent. The
 * commands in flight wait in a ring, oldest first, and one timer waits for the oldest deadline.
 * Commands already answered are dropped from the front as new ones arrive, so the ring holds
 * about what is in flight and an answered command is not kept alive by it.
 *
 * The timer does not fail anything itself: it lets one poll of the sockets go first
 * (setImmediate runs after it). When this process was not running for longer than the timeout
 * (a stalled event loop, a starved CPU), its timers and the answers Redis sent meanwhile are due
 * together, and timers come first in a loop turn; a command whose answer is already here is then
 * read, not failed as late and counted as an outage.
 */
export class CommandDeadlines {
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private commands: (Command | undefined)[] = new Array(INITIAL_CAPACITY);
  private deadlines = new Float64Array(INITIAL_CAPACITY);
  /** Index of the oldest command in the ring, and how many there are. */
  private first = 0;
  private size = 0;
  private timer: NodeJS.Timeout | null = null;

  /** `now` is real elapsed time in ms (performance.now); tests may pass their own. */
  constructor(timeoutMs: number, now: () => number = () => performance.now()) {
    this.timeoutMs = timeoutMs;
    this.now = now;
  }

  /** How many commands are tracked (answered ones not yet dropped included). */
  get tracked(): number {
    return this.size;
  }

  /** Fails `command` with "Command timed out" unless it is answered within the timeout from now. */
  track(command: Command): void {
    this.dropAnswered();
    if (this.size === this.commands.length) this.grow();
    const index = (this.first + this.size) & (this.commands.length - 1);
    this.commands[index] = command;
    this.deadlines[index] = this.now() + this.timeoutMs;
    this.size++;
    this.timer ??= setTimeout(this.due, this.timeoutMs).unref();
  }

  /**
   * The oldest deadline is due: answers that arrived meanwhile are read first, then `expire`. The
   * immediate stays ref'd: an unref'd one does not keep libuv's poll from sleeping, and with Redis
   * silent and nothing else to wake it, the process slept until some later timer (ioredis' socket
   * timeout, seconds away) before failing the command.
   */
  private readonly due = (): void => {
    setImmediate(this.expire);
  };

  /** Fails every command past its deadline; waits again for the oldest one left, if any. */
  private readonly expire = (): void => {
    this.timer = null;
    const now = this.now();
    const mask = this.commands.length - 1;
    while (this.size > 0) {
      const command = this.commands[this.first]!;
      if (!command.isSettled) {
        if (this.deadlines[this.first]! > now) break;
        command.reject(new Error('Command timed out'));
      }
      this.commands[this.first] = undefined;
      this.first = (this.first + 1) & mask;
      this.size--;
    }
    if (this.size > 0) {
      const wait = Math.max(1, Math.ceil(this.deadlines[this.first]! - now));
      this.timer = setTimeout(this.due, wait).unref();
    }
  };

  /** Drops answered commands from the front (Redis answers one connection's commands in order). */
  private dropAnswered(): void {
    const mask = this.commands.length - 1;
    while (this.size > 0 && this.commands[this.first]!.isSettled) {
      this.commands[this.first] = undefined;
      this.first = (this.first + 1) & mask;
      this.size--;
    }
  }

  /** Doubles the ring, oldest first at index 0. */
  private grow(): void {
    const capacity = this.commands.length;
    const commands: (Command | undefined)[] = new Array(capacity * 2);
    const deadlines = new Float64Array(capacity * 2);
    for (let i = 0; i < this.size; i++) {
      const from = (this.first + i) & (capacity - 1);
      commands[i] = this.commands[from];
      deadlines[i] = this.deadlines[from]!;
    }
    this.commands = commands;
    this.deadlines = deadlines;
    this.first = 0;
  }
}
