// The login gate's known-device lane (contract §11): each account's attempts oldest first, the accounts in turn, one check per account at a time.

/**
 * Waiting known-device attempts by account. Accounts take turns: the first account in turn with no
 * check running gives its oldest attempt and goes to the back, so many cookies of one account (an
 * insider's own) cannot hold the lane. The counts the gate's estimate needs are kept as the lines
 * change, never by walking them.
 */
export class KnownLane<T> {
  private readonly lines = new Map<string, T[]>();
  private turns: string[] = [];
  /** Accounts with a check running (one each at most). */
  private readonly running = new Set<string>();
  #queued = 0;
  #waitingAccounts = 0;

  /** Attempts waiting, every account together. */
  get queued(): number {
    return this.#queued;
  }

  /**
   * Accounts with attempts waiting and no check running: each will take one slot, and its backlog
   * then runs on that slot, one check at a time.
   */
  get waitingAccounts(): number {
    return this.#waitingAccounts;
  }

  /** Attempts `account` has waiting (its running check aside). */
  waiting(account: string): number {
    return this.lines.get(account)?.length ?? 0;
  }

  /** `item` waits behind `account`'s other attempts. */
  push(account: string, item: T): void {
    const line = this.lines.get(account);
    if (line) line.push(item);
    else
      this.tracked(account, () => {
        this.lines.set(account, [item]);
        this.turns.push(account);
      });
    this.#queued++;
  }

  /** The oldest attempt of the first account in turn with no check running; that account's check now runs. */
  next(): T | null {
    for (let i = 0; i < this.turns.length; i++) {
      const account = this.turns[i]!;
      if (this.running.has(account)) continue;
      const line = this.lines.get(account)!;
      const item = line.shift()!;
      this.#queued--;
      this.turns.splice(i, 1);
      this.tracked(account, () => {
        if (line.length > 0) this.turns.push(account);
        else this.lines.delete(account);
        this.running.add(account);
      });
      return item;
    }
    return null;
  }

  /** `account`'s running check ended: its next attempt may have a slot. */
  finished(account: string): void {
    this.tracked(account, () => this.running.delete(account));
  }

  /** `item` leaves `account`'s line without a check (it gave up waiting). */
  drop(account: string, item: T): void {
    const line = this.lines.get(account);
    const index = line?.indexOf(item) ?? -1;
    if (!line || index < 0) return;
    line.splice(index, 1);
    this.#queued--;
    if (line.length === 0) {
      this.tracked(account, () => this.lines.delete(account));
      this.turns = this.turns.filter((other) => other !== account);
    }
  }

  /** Applies a change to an account's line or running check, keeping `waitingAccounts` in step. */
  private tracked(account: string, change: () => void): void {
    const before = this.lines.has(account) && !this.running.has(account);
    change();
    const after = this.lines.has(account) && !this.running.has(account);
    this.#waitingAccounts += Number(after) - Number(before);
  }
}
