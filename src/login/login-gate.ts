// The gate in front of every password check at login (docs/rules.md#the-login-gate).
import type { Clock } from '../clock.ts';
import { AskedBits } from './asked-bits.ts';
import { KnownLane } from './known-lane.ts';
import { WorkLine } from './work-line.ts';

/** Known-device attempts wait in a lane of their own, served first; every other attempt shares the other. */
export type GateLane = 'known' | 'shared';

/**
 * Where an attempt waits: a known device under its account (accounts take turns), or the shared
 * line with the work it proved (docs/rules.md#proved-work: bits of a solved challenge, 0 for none)
 * under the account it names (the submitted email's normal form, whether or not an account has it).
 */
export type GatePlace =
  | { readonly lane: 'known'; readonly account: string }
  | { readonly lane: 'shared'; readonly work?: number; readonly account?: string };

export const SHARED: GatePlace = Object.freeze({ lane: 'shared' });

/**
 * Attempts one account may have waiting at once in either lane (besides the one in line or in its
 * check). Its checks run one at a time, so more would only wait longer; an insider with many
 * browsers of their own account gets the extra attempts refused at once (429) instead of queued.
 */
export const MAX_WAITING_PER_ACCOUNT = 4;

export interface LoginGateOptions {
  /** Checks that may run at once. */
  readonly concurrency: number;
  /** A shared-lane attempt expected to wait longer than this is shed (its answer held this long), and one that has waited this long is too. */
  readonly maxWaitMs: number;
  readonly clock: Clock;
  /** What one check is taken to cost until checks have been timed (a measured one, such as the boot's dummy hash). */
  readonly initialCheckMs?: number;
}

/** On arrival, after waiting the bound, or pushed out by an attempt that proved more work. */
export type ShedReason = 'expected-wait' | 'deadline' | 'displaced';

/** What the gate tells its observers (metrics, the pressure tracker); each call is synchronous and must not throw. */
export interface LoginGateObserver {
  /** An attempt got its turn after waiting `waitMs`; `work` is the bits it proved (shared lane; 0 known). */
  granted?(lane: GateLane, waitMs: number, work: number): void;
  /** A check ran for `durationMs`. */
  checked?(lane: GateLane, durationMs: number): void;
  /** A shared-lane attempt that proved `work` bits was turned away (see ShedReason). */
  shed?(reason: ShedReason, work: number): void;
}

/** An attempt's turn: it may run its checks now, or it was shed (and should come back in `retryAfter` s). */
export type Turn = { readonly shed: false } | { readonly shed: true; readonly retryAfter: number };

export type Admission =
  | { readonly shed: true }
  | { readonly shed: false; readonly ticket: Ticket }
  /**
   * Known lane: the account has MAX_WAITING_PER_ACCOUNT attempts waiting already; come back in
   * `retryAfter` s (answer after `hold()`, as a shed: an insider's extra attempts, answered at
   * once, would come straight back and fill the event loop).
   */
  | { readonly shed: false; readonly ticket: null; readonly retryAfter: number };

/** An admitted attempt: its place in the queue, then its slot. */
export interface Ticket {
  /** Resolves when the attempt may run its checks, or when it is shed after waiting `maxWaitMs` (shared lane only). */
  readonly turn: Promise<Turn>;
  /** Runs one check on the slot and times it; only once `turn` resolved unshed. */
  run<T>(check: () => Promise<T>): Promise<T>;
  /** Frees the slot, or leaves the queue; once the attempt is done with the gate, whatever happened. */
  close(): void;
}

/** What the gate is doing now, for the admin's view and the metrics' gauges. */
export interface GateState {
  readonly concurrency: number;
  readonly running: number;
  readonly queued: { readonly known: number; readonly shared: number };
  /** Turned-away attempts (shed, or over their account's backlog) whose answer is held until the bound passes. */
  readonly held: number;
  /** The current estimate of one check's duration (ms), from the checks timed so far. */
  readonly checkMs: number;
  /** The bits a challenge asks for now: 0 without pressure (docs/rules.md#proved-work). */
  readonly askedBits: number;
}

/** How fast the estimate follows the checks' durations: about the last ten weigh in. */
const SMOOTHING = 0.2;
/** A shed attempt is told to come back within this many seconds at most. */
const MAX_RETRY_AFTER_SECONDS = 60;

type WaiterState = 'queued' | 'running' | 'done';

class Waiter implements Ticket {
  state: WaiterState = 'queued';
  readonly turn: Promise<Turn>;
  resolve!: (turn: Turn) => void;

  readonly gate: LoginGate;
  readonly place: GatePlace;
  /** When it came; for an attempt that waited behind its account's, when it took its place in line. */
  queuedAt: number;
  /** Proved bits, as the shared line orders them (0 in the known lane). */
  readonly work: number;
  /** Shared lane: waiting behind its account's attempt in line or in its check, not in line itself. */
  behind = false;

  constructor(gate: LoginGate, place: GatePlace, queuedAt: number) {
    this.gate = gate;
    this.place = place;
    this.queuedAt = queuedAt;
    this.work = place.lane === 'shared' ? WorkLine.bitsOf(place.work ?? 0) : 0;
    this.turn = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  run<T>(check: () => Promise<T>): Promise<T> {
    if (this.state !== 'running') return Promise.reject(new Error('a check runs only on a granted slot'));
    return this.gate.timed(this.place.lane, check);
  }

  close(): void {
    this.gate.leave(this);
  }
}

/**
 * Schedules password checks: at most `concurrency` run at once. Known-device attempts are always
 * served before shared ones; among them, at most one attempt per account runs at a time and the
 * accounts waiting take turns, so many cookies of one account cannot hold the lane. A shared-lane
 * attempt is admitted only if the wait expected from the queue ahead of it and the measured check
 * time is within `maxWaitMs`, and is shed if it has waited that long anyway. The shared line is
 * ordered by proved work (bits, then arrival, docs/rules.md#proved-work): only the attempts with at least a
 * newcomer's work are ahead of it, and one that fits pushes out the least work when the line is
 * full. The gate knows nothing of accounts' existence: a shed depends only on the queue and work.
 */
export class LoginGate {
  private readonly concurrency: number;
  private readonly maxWaitMs: number;
  private readonly clock: Clock;
  private checkMs: number;
  private running = 0;
  /** Turned-away attempts whose answer is being held (`hold`). */
  private holding = 0;
  /** The shared line, by proved work then arrival. */
  private readonly shared = new WorkLine<Waiter>();
  /** Known-device attempts by account, the accounts in turn. */
  private readonly known = new KnownLane<Waiter>();
  /**
   * Shared lane, by account: the one attempt it has in line or in its check, and the attempts
   * waiting behind it (at most MAX_WAITING_PER_ACCOUNT). One account's attempts take one place in
   * the line, so its backlog delays others by one check at most, as in the known lane.
   */
  private readonly sharedAccounts = new Map<string, { current: Waiter; behind: Waiter[] }>();
  private sharedBehind = 0;
  private readonly observers = new Set<LoginGateObserver>();
  private readonly bits = new AskedBits();

  constructor(options: LoginGateOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new RangeError('the gate needs a concurrency of at least 1');
    this.concurrency = options.concurrency;
    this.maxWaitMs = options.maxWaitMs;
    this.clock = options.clock;
    this.checkMs = Math.max(0, options.initialCheckMs ?? 0);
  }

  /** Tells `observer` what happens from now on; returns the function that stops it. */
  observe(observer: LoginGateObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /**
   * Admits an attempt to its lane, or sheds it (shared lane only, no place in the queue; answer it
   * after `hold()`) when the wait expected for it exceeds the bound. An admitted attempt must
   * `close()` its ticket, granted or not.
   */
  enter(place: GatePlace): Admission {
    const now = this.clock.now();
    this.expire(now);
    const account =
      place.lane === 'shared' && place.account !== undefined
        ? this.sharedAccounts.get(place.account)
        : undefined;
    const waiting =
      place.lane === 'known' ? this.known.waiting(place.account) : (account?.behind.length ?? 0);
    if (waiting >= MAX_WAITING_PER_ACCOUNT)
      return { shed: false, ticket: null, retryAfter: this.retryAfter((waiting + 1) * this.checkMs) };
    const waiter = new Waiter(this, place, now);
    if (account) {
      // Its account has an attempt in line or in a check: it waits behind that one, out of the line,
      // unless that wait (the line's, then its account's checks ahead of it) is past the bound.
      if (this.expectedWaitMs(waiter.work) + (account.behind.length + 1) * this.checkMs > this.maxWaitMs) {
        this.shedNow('expected-wait', waiter.work, now);
        return { shed: true };
      }
      waiter.behind = true;
      account.behind.push(waiter);
      this.sharedBehind++;
      return { shed: false, ticket: waiter };
    }
    if (place.lane === 'shared') {
      if (this.expectedWaitMs(waiter.work) > this.maxWaitMs) {
        this.shedNow('expected-wait', waiter.work, now);
        return { shed: true };
      }
      this.shared.push(waiter);
      if (place.account !== undefined)
        this.sharedAccounts.set(place.account, { current: waiter, behind: [] });
    } else {
      this.known.push(place.account, waiter);
    }
    this.pump(now);
    if (place.lane === 'shared') this.displace(now);
    return { shed: false, ticket: waiter };
  }

  /**
   * Holds a shed attempt's answer until the wait it was refused would have ended (`maxWaitMs`), then
   * gives the seconds to come back after. Answered at once, a flood's sheds would come back at once:
   * its attempts would cost the event loop what the gate spared the pool. Held, an attacker with N
   * attempts in flight gets about N answers per `maxWaitMs`, and a held answer takes no place in the queue.
   */
  async hold(): Promise<number> {
    this.holding++;
    try {
      await this.clock.sleep(this.maxWaitMs);
    } finally {
      this.holding--;
    }
    return this.retryAfter(this.expectedWaitMs());
  }

  /**
   * The wait (ms) a shared-lane attempt arriving now with `work` proved bits should expect before
   * its check starts. It counts runnable work: the shared attempts with at least as much work (the
   * line is ordered by it, docs/rules.md#proved-work), and one check for each account whose known-device backlog
   * waits for a slot. An account whose check runs already holds its slot (its backlog follows on it,
   * one at a time) and adds nothing: however long one account's backlog, it occupies at most one
   * slot of the estimate.
   */
  expectedWaitMs(work = 0): number {
    const waitingAccounts = this.known.waitingAccounts;
    if (this.running + waitingAccounts + this.shared.size < this.concurrency) return 0;
    const ahead = waitingAccounts + this.shared.atLeast(work);
    // It starts after the work ahead of it and one more check end; checks end at concurrency/checkMs.
    return ((ahead + 1) * this.checkMs) / this.concurrency;
  }

  /**
   * The bits a challenge asks for now (docs/rules.md#proved-work): 0 without pressure (no shed in the last
   * WORK_WINDOW_MS); under pressure one more than the least work granted a check lately, so a
   * client that solves it is served before everything that proved less.
   */
  askedBits(now = this.clock.now()): number {
    return this.bits.at(now);
  }

  state(): GateState {
    this.expire(this.clock.now());
    return {
      concurrency: this.concurrency,
      running: this.running,
      queued: { known: this.known.queued, shared: this.shared.size + this.sharedBehind },
      held: this.holding,
      checkMs: this.checkMs,
      askedBits: this.askedBits(),
    };
  }

  /** @internal Times one check of a granted slot and folds its duration into the estimate. */
  async timed<T>(lane: GateLane, check: () => Promise<T>): Promise<T> {
    const started = this.clock.now();
    try {
      return await check();
    } finally {
      const duration = Math.max(0, this.clock.now() - started);
      // With nothing measured yet (no boot estimate), the first check is the estimate.
      this.checkMs = this.checkMs === 0 ? duration : this.checkMs + SMOOTHING * (duration - this.checkMs);
      this.notify((o) => o.checked?.(lane, duration));
    }
  }

  /** @internal A ticket is done: its slot frees (and the next attempt gets it), or it leaves the queue. */
  leave(waiter: Waiter): void {
    const was = waiter.state;
    if (was === 'done') return;
    waiter.state = 'done';
    let finished: string | undefined;
    const now = this.clock.now();
    if (was === 'running') {
      this.running--;
      const { place } = waiter;
      if (place.lane === 'known') {
        this.known.finished(place.account);
        finished = place.account;
      } else this.accountMovesOn(waiter, now);
    } else if (waiter.behind) {
      this.leaveBehind(waiter);
      waiter.resolve({ shed: true, retryAfter: this.retryAfter(this.expectedWaitMs()) });
    } else if (waiter.place.lane === 'shared') {
      this.shared.left(waiter);
      waiter.resolve({ shed: true, retryAfter: this.retryAfter(this.expectedWaitMs()) });
      this.accountMovesOn(waiter, now);
    } else {
      this.known.drop(waiter.place.account, waiter);
      waiter.resolve({ shed: true, retryAfter: 1 });
    }
    this.pump(now, finished);
  }

  /**
   * The shared attempt `done` (its account's current one) is out of line and out of its check: the
   * oldest attempt behind it takes its place in line, from now on under the line's bound.
   */
  private accountMovesOn(done: Waiter, now: number): void {
    const { account: name } = done.place as { account?: string };
    if (name === undefined) return;
    const account = this.sharedAccounts.get(name);
    if (!account || account.current !== done) return;
    const next = account.behind.shift();
    if (next === undefined) {
      this.sharedAccounts.delete(name);
      return;
    }
    this.sharedBehind--;
    next.behind = false;
    // In line from now: its wait behind its own account's attempts was admitted on arrival (the
    // line's wait plus its account's checks ahead of it within the bound).
    next.queuedAt = now;
    account.current = next;
    this.shared.push(next);
    this.displace(now);
  }

  /** A shared attempt waiting behind its account's current one gives up (its ticket closed). */
  private leaveBehind(waiter: Waiter): void {
    const { account: name } = waiter.place as { account?: string };
    const behind = name === undefined ? undefined : this.sharedAccounts.get(name)?.behind;
    const index = behind?.indexOf(waiter) ?? -1;
    if (index < 0) return;
    behind!.splice(index, 1);
    this.sharedBehind--;
    waiter.behind = false;
  }

  /**
   * Hands free slots out: known devices first (account by account, in turn), then the shared line.
   * One exception keeps an account's backlog to one slot's worth: when `finished`'s check just ended,
   * its next attempt would be served next, and every other slot runs a known-device check (one slot
   * of all, or many insiders), a waiting shared attempt goes first. Otherwise a backlog on a
   * one-slot gate would hold the shared lane until every attempt in it was shed.
   */
  private pump(now: number, finished?: string): void {
    this.expire(now);
    let yieldTo = finished;
    while (this.running < this.concurrency) {
      const backlogWouldHoldEverySlot =
        yieldTo !== undefined &&
        this.shared.size > 0 &&
        this.known.nextAccount() === yieldTo &&
        this.known.runningAccounts >= this.concurrency - 1;
      yieldTo = undefined;
      const next = backlogWouldHoldEverySlot ? this.nextShared() : (this.known.next() ?? this.nextShared());
      if (!next) return;
      next.state = 'running';
      this.running++;
      const waited = now - next.queuedAt;
      if (next.place.lane === 'shared') this.bits.granted(next.work, now);
      this.notify((o) => o.granted?.(next.place.lane, waited, next.work));
      next.resolve({ shed: false });
    }
  }

  private nextShared(): Waiter | null {
    const waiter = this.shared.best();
    if (waiter) this.shared.left(waiter);
    return waiter;
  }

  /** Sheds the shared attempts that have waited `maxWaitMs` already: the oldest of each bucket of work. */
  private expire(now: number): void {
    for (const waiter of this.shared.olderThan(now - this.maxWaitMs)) {
      waiter.state = 'done';
      this.shared.left(waiter);
      this.shedNow('deadline', waiter.work, now);
      waiter.resolve({ shed: true, retryAfter: this.retryAfter(this.expectedWaitMs()) });
      this.accountMovesOn(waiter, now);
    }
  }

  /**
   * While the last attempt of a full shared line would wait past the bound, the least work leaves
   * it: an attempt that proved more was admitted ahead of it. Without work this never happens (a
   * newcomer is admitted only when the whole line fits).
   */
  private displace(now: number): void {
    // The last in line has everything else ahead of it: its check starts after that and one more end.
    while (
      ((this.known.waitingAccounts + this.shared.size) * this.checkMs) / this.concurrency >
      this.maxWaitMs
    ) {
      const least = this.shared.least();
      if (!least) return;
      least.state = 'done';
      this.shared.left(least);
      this.shedNow('displaced', least.work, now);
      least.resolve({ shed: true, retryAfter: this.retryAfter(this.expectedWaitMs(least.work)) });
      this.accountMovesOn(least, now);
    }
  }

  private shedNow(reason: ShedReason, work: number, now: number): void {
    this.bits.shed(now);
    this.notify((o) => o.shed?.(reason, work));
  }

  /** Whole seconds to come back after, from the wait expected now: at least 1. */
  private retryAfter(expectedMs: number): number {
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(expectedMs / 1000)));
  }

  private notify(call: (observer: LoginGateObserver) => void): void {
    for (const observer of this.observers) {
      try {
        call(observer);
      } catch {
        // An observer (metrics, events) must never break the scheduling of checks.
      }
    }
  }
}
