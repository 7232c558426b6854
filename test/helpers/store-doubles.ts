// Stand-ins for the store stack's collaborators: a remote store that can fail or hang, a log.
import type { Clock } from '../../src/clock.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import {
  type LockEntry,
  type RateDecision,
  type RateRule,
  type RemoteHealth,
  type RemoteStore,
  type StoreLogger,
  StoreUnavailableError,
} from '../../src/rate-limit/stores/store.ts';

/**
 * A RemoteStore kept in this process: answers with promises as Redis does, fails every operation
 * after `fail()` (as a dead Redis does once its timeout passes) and holds every answer after
 * `hold()` until `answer()` (a hung server). Not for atomicity: the contract suite runs on Redis.
 */
export class FakeRemoteStore implements RemoteStore {
  readonly name = 'redis';
  /** Every operation asked of it, in order (`consume`, `ping`, …). */
  readonly asked: string[] = [];
  private readonly memory: MemoryStore;
  private available = true;
  private held: (() => void)[] | null = null;

  constructor(clock: Clock, options: { readonly marksMax?: number } = {}) {
    this.memory = new MemoryStore({ clock, sweepIntervalMs: 0, ...options });
  }

  fail(): void {
    this.available = false;
  }

  recover(): void {
    this.available = true;
  }

  hold(): void {
    this.held ??= [];
  }

  /** Lets the held operations go on, each failing or answering per the state it finds. */
  answer(): void {
    const waiting = this.held ?? [];
    this.held = null;
    for (const go of waiting) go();
  }

  /** How many times `operation` was asked. */
  count(operation: string): number {
    return this.asked.filter((asked) => asked === operation).length;
  }

  consume(rule: RateRule, key: string): Promise<RateDecision> {
    return this.run('consume', () => this.memory.consume(rule, key));
  }

  peek(rule: RateRule, key: string): Promise<RateDecision> {
    return this.run('peek', () => this.memory.peek(rule, key));
  }

  release(rule: RateRule, key: string, token: number): Promise<void> {
    return this.run('release', () => this.memory.release(rule, key, token));
  }

  reset(rule: RateRule, key: string): Promise<void> {
    return this.run('reset', () => this.memory.reset(rule, key));
  }

  noteLock(rule: RateRule, key: string, resetMs: number): Promise<void> {
    return this.run('noteLock', () => this.memory.noteLock(rule, key, resetMs));
  }

  locks(rule: RateRule, max: number): Promise<readonly LockEntry[]> {
    return this.run('locks', () => this.memory.locks(rule, max));
  }

  claimOnce(scope: string, series: string, slot: number, ttlMs: number): Promise<boolean> {
    return this.run('claimOnce', () => this.memory.claimOnce(scope, series, slot, ttlMs));
  }

  putOnce(scope: string, holder: string, mark: string, ttlMs: number): Promise<number> {
    return this.run('putOnce', () => this.memory.putOnce(scope, holder, mark, ttlMs));
  }

  takeOnce(scope: string, holder: string, mark: string): Promise<boolean> {
    return this.run('takeOnce', () => this.memory.takeOnce(scope, holder, mark));
  }

  ping(): Promise<void> {
    return this.run('ping', () => undefined);
  }

  async ready(): Promise<boolean> {
    return this.available;
  }

  health(): RemoteHealth {
    return { connected: this.available, lastError: this.available ? null : 'connect ECONNREFUSED (fake)' };
  }

  close(): Promise<void> {
    return this.memory.close();
  }

  private async run<T>(operation: string, work: () => T): Promise<T> {
    this.asked.push(operation);
    const held = this.held;
    if (held) await new Promise<void>((go) => held.push(go));
    if (!this.available) throw new StoreUnavailableError(`fake remote store: ${operation} failed`);
    return work();
  }
}

/** A log that remembers its lines, for tests that check an outage's two log lines. */
export class MemoryLog implements StoreLogger {
  readonly lines: { level: 'warn' | 'info'; message: string; details: object }[] = [];
  warn(details: object, message: string): void {
    this.lines.push({ level: 'warn', message, details });
  }
  info(details: object, message: string): void {
    this.lines.push({ level: 'info', message, details });
  }
  child(): StoreLogger {
    return this;
  }
}
