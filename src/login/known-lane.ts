// The gate's known-device lane (docs/rules.md#the-login-gate): accounts in turn, one check each at a time.

/**
 * Waiting known-device attempts by account. Accounts take turns: the first account in line gives its
 * oldest attempt and leaves the line while that check runs; when the check ends, the account goes
 * to the back if it has more waiting. So many cookies of one account (an insider's own) cannot hold
 * the lane, and an account that arrives while another's check runs is served before that
 * account's next attempt. The line of accounts is the count the gate's estimate needs.
 */
export class KnownLane<T> {
  private readonly lines = new Map<string, T[]>();
  /** Accounts with attempts waiting and no check running, in the order they get a slot. */
  private turns: string[] = [];
  /** Accounts with a check running (one each at most). */
  private readonly running = new Set<string>();
  #queued = 0;

  /** Attempts waiting, every account together. */
  get queued(): number {
    return this.#queued;
  }

  /**
   * Accounts with attempts waiting and no check running: each will take one slot, and its backlog
   * then runs on that slot, one check at a time.
   */
  get waitingAccounts(): number {
    return this.turns.length;
  }

  /** Accounts with a check running. */
  get runningAccounts(): number {
    return this.running.size;
  }

  /** The account `next()` would serve, or null. */
  nextAccount(): string | null {
    return this.turns[0] ?? null;
  }

  /** Attempts `account` has waiting (its running check aside). */
  waiting(account: string): number {
    return this.lines.get(account)?.length ?? 0;
  }

  /** `item` waits behind `account`'s other attempts. */
  push(account: string, item: T): void {
    const line = this.lines.get(account);
    if (line) line.push(item);
    else {
      this.lines.set(account, [item]);
      if (!this.running.has(account)) this.turns.push(account);
    }
    this.#queued++;
  }

  /** The oldest attempt of the first account in line; that account's check now runs. */
  next(): T | null {
    const account = this.turns.shift();
    if (account === undefined) return null;
    const line = this.lines.get(account)!;
    const item = line.shift()!;
    if (line.length === 0) this.lines.delete(account);
    this.#queued--;
    this.running.add(account);
    return item;
  }

  /** `account`'s running check ended: it goes to the back of the line if it has more waiting. */
  finished(account: string): void {
    this.running.delete(account);
    if (this.lines.has(account)) this.turns.push(account);
  }

  /** `item` leaves `account`'s line without a check (it gave up waiting). */
  drop(account: string, item: T): void {
    const line = this.lines.get(account);
    const index = line?.indexOf(item) ?? -1;
    if (!line || index < 0) return;
    line.splice(index, 1);
    this.#queued--;
    if (line.length === 0) {
      this.lines.delete(account);
      this.turns = this.turns.filter((other) => other !== account);
    }
  }
}
