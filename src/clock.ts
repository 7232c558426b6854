// Where the time comes from: the real clock in production, a hand-moved one in tests.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  private time: number;

  constructor(time = 1_700_000_000_000) {
    this.time = time;
  }
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
  set(ms: number): void {
    this.time = ms;
  }
}
