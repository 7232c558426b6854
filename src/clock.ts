// Where the time comes from: the real clock in production, a hand-moved one in tests.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves once `ms` have passed on this clock. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A clock that only moves when told to; its sleeps end when it is moved past them. */
export class ManualClock implements Clock {
  private time: number;
  private sleepers: { readonly until: number; readonly wake: () => void }[] = [];

  constructor(time = 1_700_000_000_000) {
    this.time = time;
  }
  now(): number {
    return this.time;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((wake) => {
      this.sleepers.push({ until: this.time + Math.max(0, ms), wake });
      this.wakeDue();
    });
  }
  /** How many sleeps are still waiting for the clock to move. */
  get sleeping(): number {
    return this.sleepers.length;
  }
  advance(ms: number): void {
    this.time += ms;
    this.wakeDue();
  }
  set(ms: number): void {
    this.time = ms;
    this.wakeDue();
  }
  private wakeDue(): void {
    const due = this.sleepers.filter((s) => s.until <= this.time);
    if (due.length === 0) return;
    this.sleepers = this.sleepers.filter((s) => s.until > this.time);
    for (const sleeper of due) sleeper.wake();
  }
}
