// Rate-limit state in Redis or Redis Cluster, shared by every instance: one script run per decision.
import { Cluster, Command, Redis, type RedisOptions } from 'ioredis';
import type { Clock } from '../../clock.ts';
import { WORK_SERIES_SLOTS } from '../../limits.ts';
import { shapeOf, type WindowShape } from '../sliding-window.ts';
import { CommandDeadlines } from './command-deadlines.ts';
import {
  LAYOUT_VERSION,
  parseDecision,
  parseFlag,
  parseLocks,
  parseWait,
  runScript,
  SCRIPTS,
  type Script,
  type SendCommand,
  type ShapeScripts,
  shapeScripts,
} from './redis-scripts.ts';
import {
  type LockEntry,
  MARKS_MAX,
  type RateDecision,
  type RateRule,
  type RedisSettings,
  type RemoteHealth,
  type RemoteStore,
  StoreUnavailableError,
} from './store.ts';
import { WriteBatch } from './write-batch.ts';

export type RedisClient = Redis | Cluster;

export interface RedisStoreOptions {
  /** Made by createRedisClient (no `commandTimeout`, no auto-pipelining: the store does both). */
  readonly client: RedisClient;
  /** Put before every key, so several deployments can share one server. */
  readonly keyPrefix: string;
  /**
   * Deadline in ms of every command the store sends (one timer for all of them,
   * command-deadlines.ts), and of the whole QUIT on close. An operation that meets NOSCRIPT (once
   * per script and server restart) may take two timeouts.
   */
  readonly timeoutMs: number;
  /**
   * Tests only: decide at this clock's time instead of Redis `TIME`, so the shared store-contract
   * suite can move a ManualClock. Production leaves it unset: then instances whose own clocks
   * disagree still share one window, because only the server's clock is read.
   */
  readonly clock?: Clock;
  /** Live single-use marks kept per scope at most, over the fleet (tests make it small); MARKS_MAX by default. */
  readonly marksMax?: number;
}

/** A decision's ARGV without a test clock: none (the script reads Redis TIME). */
const NO_ARGS: readonly number[] = [];

/** Reconnection waits 100 ms, 200 ms, 400 ms … but never more than this between attempts. */
const RECONNECT_MAX_MS = 1000;

const reconnectDelay = (attempt: number): number =>
  Math.min(100 * 2 ** Math.max(0, attempt - 1), RECONNECT_MAX_MS);

/**
 * A client for the configuration: a Cluster when REDIS_CLUSTER_NODES is set, else one server.
 * Neither ioredis' `commandTimeout` nor its `enableAutoPipelining`: the store bounds every command
 * it sends with one shared timer (command-deadlines.ts) and sends the commands of one event-loop
 * turn in one write (write-batch.ts), each for fewer instructions per request than the library's
 * (docs/architecture.md#hand-written-where-the-library-costs-more).
 */
export function createRedisClient(redis: RedisSettings): RedisClient {
  // What the client sends on its own as it connects (CLIENT SETNAME, the INFO ready check) is
  // bounded by `socketTimeout`: a server that accepts the connection and then says nothing gets
  // its socket destroyed, and the client reconnects rather than waiting for ever. Its timer is per
  // socket read, not per command.
  const setupTimeoutMs = Math.max(1000, redis.commandTimeoutMs * 10);
  const perConnection: RedisOptions = {
    connectTimeout: setupTimeoutMs,
    socketTimeout: setupTimeoutMs,
    // A command lost with its connection is failed, never sent again: a consume resent after a
    // reconnect could count one request twice, and a late answer is useless to a waiting request.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectionName: 'task-portal-rate-limit',
    enableAutoPipelining: false,
  };
  if (redis.clusterNodes) {
    return new Cluster(
      redis.clusterNodes.map(({ host, port }) => ({ host, port })),
      {
        // No queue while the cluster is (re)connecting: the request is answered by the fallback instead.
        enableOfflineQueue: false,
        enableAutoPipelining: false,
        clusterRetryStrategy: reconnectDelay,
        slotsRefreshTimeout: setupTimeoutMs,
        redisOptions: perConnection,
      },
    );
  }
  return new Redis(redis.url!, {
    ...perConnection,
    enableOfflineQueue: false,
    retryStrategy: reconnectDelay,
  });
}

interface RuleShape {
  readonly shape: WindowShape;
  readonly scripts: ShapeScripts;
  /** The part of every key of this rule after the caller's key. */
  readonly suffix: string;
}

export class RedisStore implements RemoteStore {
  readonly name = 'redis';
  readonly client: RedisClient;
  /** The last connection error the client reported (for the log line of an outage). */
  private lastConnectionError: Error | null = null;
  private readonly keyPrefix: string;
  private readonly timeoutMs: number;
  private readonly clock: Clock | undefined;
  private readonly marksMax: number;
  // Rules are constants of the policy: their shape and arguments are worked out once.
  private readonly shapes = new WeakMap<RateRule, RuleShape>();
  private readonly batch: WriteBatch;
  private readonly deadlines: CommandDeadlines;

  constructor(options: RedisStoreOptions) {
    this.client = options.client;
    this.batch = new WriteBatch(options.client);
    this.deadlines = new CommandDeadlines(options.timeoutMs);
    this.keyPrefix = options.keyPrefix;
    this.timeoutMs = options.timeoutMs;
    this.clock = options.clock;
    this.marksMax = options.marksMax ?? MARKS_MAX;
    // Without a listener the client prints every reconnection failure; failures are accounted
    // for per operation (StoreUnavailableError) and logged once per outage by the failover store.
    this.client.on('error', (error: Error) => {
      this.lastConnectionError = error;
    });
  }

  /**
   * The Redis key of a (rule, key) pair. The hash tag `{rule:key}` keeps all of one key in one
   * cluster slot; the budget and the layout are in the key too, so a deployment that changes a
   * budget (or the bucket layout) starts a fresh state instead of misreading the old one.
   */
  keyOf(rule: RateRule, key: string): string {
    return `${this.keyPrefix}{${rule.name}:${key}}${this.ruleShape(rule).suffix}`;
  }

  consume(rule: RateRule, key: string): Promise<RateDecision> {
    return this.decide(rule, key, true);
  }

  peek(rule: RateRule, key: string): Promise<RateDecision> {
    return this.decide(rule, key, false);
  }

  async release(rule: RateRule, key: string, token: number): Promise<void> {
    const { scripts } = this.ruleShape(rule);
    await this.run('release', scripts.release, this.keyOf(rule, key), [token], (reply) =>
      parseFlag('release', reply),
    );
  }

  async reset(rule: RateRule, key: string): Promise<void> {
    await this.run('reset', SCRIPTS.reset, this.keyOf(rule, key), [], (reply) => parseFlag('reset', reply));
  }

  /**
   * The key of a rule's lock index: `{rule}` is a hash tag of its own (state keys are tagged
   * `{rule:key}`), so the whole index is one slot, and no caller's key can name it.
   */
  lockIndexOf(rule: RateRule): string {
    return `${this.keyPrefix}{${rule.name}}:locks${this.ruleShape(rule).suffix}`;
  }

  async noteLock(rule: RateRule, key: string, resetMs: number): Promise<void> {
    const { shape } = this.ruleShape(rule);
    const now = this.clock ? Math.floor(this.clock.now()) : '';
    const args = [key, Math.max(1, Math.ceil(resetMs)), shape.horizonMs, now];
    await this.run('noteLock', SCRIPTS.noteLock, this.lockIndexOf(rule), args, (reply) =>
      parseFlag('noteLock', reply),
    );
  }

  locks(rule: RateRule, max: number): Promise<readonly LockEntry[]> {
    const now = this.clock ? Math.floor(this.clock.now()) : '';
    return this.run('locks', SCRIPTS.locks, this.lockIndexOf(rule), [max, now], parseLocks);
  }

  /** A series' claim record: a hash tag of its own, apart from every rule's state and index. */
  claimKeyOf(scope: string, series: string): string {
    return `${this.keyPrefix}{claim:${scope}:${series}}`;
  }

  claimOnce(scope: string, series: string, slot: number, ttlMs: number): Promise<boolean> {
    if (!Number.isInteger(slot) || slot < 0 || slot >= WORK_SERIES_SLOTS) return Promise.resolve(false);
    const args = [slot, Math.max(1, Math.ceil(ttlMs))];
    return this.run('claimOnce', SCRIPTS.claimOnce, this.claimKeyOf(scope, series), args, (reply) =>
      parseFlag('claimOnce', reply),
    );
  }

  /**
   * A scope's single-use marks: a hash and a sorted set under one hash tag of their own (one
   * cluster slot, apart from every rule's state and index), so one script counts and changes them.
   */
  markKeysOf(scope: string): [held: string, ends: string] {
    return [`${this.keyPrefix}{once:${scope}}:held`, `${this.keyPrefix}{once:${scope}}:ends`];
  }

  putOnce(scope: string, holder: string, mark: string, ttlMs: number): Promise<number> {
    const now = this.clock ? Math.floor(this.clock.now()) : '';
    const args = [holder, mark, Math.max(1, Math.ceil(ttlMs)), this.marksMax, now];
    return this.run('putOnce', SCRIPTS.putOnce, this.markKeysOf(scope), args, (reply) =>
      parseWait('putOnce', reply),
    );
  }

  takeOnce(scope: string, holder: string, mark: string): Promise<boolean> {
    const now = this.clock ? Math.floor(this.clock.now()) : '';
    return this.run('takeOnce', SCRIPTS.takeOnce, this.markKeysOf(scope), [holder, mark, now], (reply) =>
      parseFlag('takeOnce', reply),
    );
  }

  /** Resolves when Redis answers a PING within the deadline; rejects with StoreUnavailableError. */
  ping(): Promise<void> {
    return this.send('ping', []).then(
      () => undefined,
      (error: unknown) => {
        throw unavailable('ping', error);
      },
    );
  }

  health(): RemoteHealth {
    return {
      connected: this.client.status === 'ready',
      lastError: this.lastConnectionError?.message ?? null,
    };
  }

  /** Waits until the client is connected (at most `timeoutMs`); true when it is. */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.client.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.once('ready', onReady);
    });
  }

  async close(): Promise<void> {
    if (this.client.status === 'ready') {
      // Not through send: a cluster's QUIT is one per node (Cluster.quit), so it has a timer of its own.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), this.timeoutMs);
      });
      try {
        if ((await Promise.race([this.client.quit(), deadline])) !== 'late') return;
      } catch {
        // Fall through: a server that does not answer QUIT is simply dropped.
      } finally {
        clearTimeout(timer);
      }
    }
    this.client.disconnect();
  }

  private decide(rule: RateRule, key: string, consume: boolean): Promise<RateDecision> {
    const { shape, scripts } = this.ruleShape(rule);
    // Without a test clock the script reads Redis TIME.
    const args = this.clock ? [Math.floor(this.clock.now())] : NO_ARGS;
    const script = consume ? scripts.consume : scripts.peek;
    return this.run(script.name, script, this.keyOf(rule, key), args, (reply) => {
      const decision = parseDecision(reply, shape, consume);
      const answer = {
        allowed: decision.allowed,
        limit: rule.limit,
        remaining: decision.remaining,
        resetMs: decision.resetMs,
      };
      return decision.token === null ? answer : { ...answer, token: decision.token };
    });
  }

  /**
   * Every script run goes here: by SHA, its source only after NOSCRIPT (redis-scripts.ts). Every
   * failure, deadline or malformed reply (`parse` throws) becomes a StoreUnavailableError: never
   * a refusal.
   */
  private run<T>(
    operation: string,
    script: Script,
    key: string | readonly string[],
    args: readonly (string | number)[],
    parse: (reply: unknown) => T,
  ): Promise<T> {
    return runScript(this.send, script, key, args).then(parse, (error: unknown) => {
      throw unavailable(operation, error);
    });
  }

  /**
   * The store's one command path: the command joins this turn's write batch and the shared
   * deadlines. It is made here rather than through `client.evalsha(…)`, whose variadic wrapper
   * copies the arguments twice more, and so that the deadline can hold the command itself.
   */
  private readonly send: SendCommand = (name, args) => {
    this.batch.hold();
    const command = new Command(name, args, { replyEncoding: 'utf8' });
    this.deadlines.track(command);
    void this.client.sendCommand(command);
    return command.promise;
  };

  private ruleShape(rule: RateRule): RuleShape {
    let known = this.shapes.get(rule);
    if (!known) {
      const shape = shapeOf(rule.limit, rule.windowMs);
      known = {
        shape,
        scripts: shapeScripts(shape),
        suffix: `:${LAYOUT_VERSION}:${rule.limit}/${rule.windowMs}`,
      };
      this.shapes.set(rule, known);
    }
    return known;
  }
}

/** A failure, a missed deadline or a malformed reply as the StoreUnavailableError callers expect. */
function unavailable(operation: string, error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`Redis failed on ${operation}: ${reason}`, { cause: error });
}
