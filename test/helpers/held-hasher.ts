// A password hasher whose checks the test holds and releases one by one: the real argon2id answer.
import { argon2Hasher, type PasswordHasher } from '../../src/auth/passwords.ts';
import type { ManualClock } from '../../src/clock.ts';

/** One check the hasher holds: which password it is for, and the hand that lets it finish. */
export interface HeldCheck {
  readonly password: string;
  /** Moves the clock by `tookMs` (the check's duration as the gate measures it) and lets it answer. */
  release(tookMs?: number): void;
}

export class HeldHasher implements PasswordHasher {
  /** Checks started and not yet released, oldest first. */
  readonly held: HeldCheck[] = [];
  /** Every check started so far, by password, in the order they started. */
  readonly started: string[] = [];
  private clock: ManualClock | null = null;
  private holding = false;
  private readonly waiters: (() => void)[] = [];

  /** Holds every check from now on; a released one advances `clock` (the app's) by its duration. */
  holdChecks(clock: ManualClock | null = null): void {
    this.clock = clock;
    this.holding = true;
  }

  /** Lets every held check answer and holds no more. */
  letThrough(): void {
    this.holding = false;
    while (this.held.length > 0) this.releaseNext(0);
  }

  verify(password: string, stored: string): Promise<boolean> {
    const answer = argon2Hasher.verify(password, stored);
    return this.holding ? this.hold(password, answer) : answer;
  }

  /** Hashes (the boot's dummy one, a rehash at login) are held like checks. */
  hash(password: string, memoryKiB: number): Promise<string> {
    const answer = argon2Hasher.hash(password, memoryKiB);
    return this.holding ? this.hold(password, answer) : answer;
  }

  /** Releases the oldest held check. */
  releaseNext(tookMs = 50): string {
    const check = this.held.shift();
    if (!check) throw new Error('no check is held');
    check.release(tookMs);
    return check.password;
  }

  /** Resolves once `count` checks are held (they start asynchronously, after the request's other steps). */
  async untilHeld(count: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (this.held.length < count) {
      if (Date.now() > deadline) throw new Error(`${this.held.length} checks held, expected ${count}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 20);
      });
    }
  }

  private hold<T>(password: string, answer: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.started.push(password);
      this.held.push({
        password,
        release: (tookMs = 50) => {
          this.clock?.advance(tookMs);
          answer.then(resolve, reject);
        },
      });
      for (const wake of this.waiters.splice(0)) wake();
    });
  }
}
