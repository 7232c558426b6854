// Rate-limit state in Redis or Redis Cluster, shared by every instance: one script run per decision.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Clock } from '../../clock.ts';
import { shapeOf, type WindowShape } from '../sliding-window.ts';
import {
  LAYOUT_VERSION,
  parseDecision,
  parseFlag,
  parseLocks,
  runScript,
  SCRIPTS,
  type Script,
  shapeArgs,
} from './redis-scripts.ts';
import {
  type LockEntry,
  type RateDecision,
  type RateRule,
  type RedisSettings,
  type RemoteHealth,
  type RemoteStore,
  StoreUnavailableError,
} from './store.ts';

export type RedisClient = Redis | Cluster;

export interface RedisStoreOptions {
  /**
   * Made by createRedisClient: its `commandTimeout` bounds each command, so an operation that
   * meets NOSCRIPT (once per script and server restart) may take two timeouts.
   */
  readonly client: RedisClient;
  /** Put before every key, so several deployments can share one server. */
  readonly keyPrefix: string;
  /**
   * Tests only: decide at this clock's time instead of Redis `TIME`, so the shared store-contract
   * suite can move a ManualClock. Production leaves it unset: then instances whose own clocks
   * disagree still share one window, because only the server's clock is read.
   */
  readonly clock?: Clock;
}

/** Reconnection waits 100 ms, 200 ms, 400 ms … but never more than this between attempts. */
const RECONNECT_MAX_MS = 1000;

const reconnectDelay = (attempt: number): number =>
  Math.min(100 * 2 ** Math.max(0, attempt - 1), RECONNECT_MAX_MS);

/**
 * A client for the configuration: a Cluster when REDIS_CLUSTER_NODES is set, else one server.
 * Every command it sends is bounded by ioredis' `commandTimeout` (REDIS_COMMAND_TIMEOUT_MS), and
 * the commands of one event-loop turn leave in one write (`enableAutoPipelining`).
 */
export function createRedisClient(redis: RedisSettings): RedisClient {
  // What the client sends on its own as it connects (CLIENT SETNAME, the INFO ready check) is
  // bounded by `socketTimeout`: a server that accepts the connection and then says nothing gets
  // its socket destroyed, and the client reconnects rather than waiting for ever.
  const setupTimeoutMs = Math.max(1000, redis.commandTimeoutMs * 10);
  const perConnection: RedisOptions = {
    commandTimeout: redis.commandTimeoutMs,
    connectTimeout: setupTimeoutMs,
    socketTimeout: setupTimeoutMs,
    // A command lost with its connection is failed, never sent again: a consume resent after a
    // reconnect could count one request twice, and a late answer is useless to a waiting request.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectionName: 'task-portal-rate-limit',
    enableAutoPipelining: true,
  };
  if (redis.clusterNodes) {
    return new Cluster(
      redis.clusterNodes.map(({ host, port }) => ({ host, port })),
      {
        // No queue while the cluster is (re)connecting: the request is answered by the fallback instead.
        enableOfflineQueue: false,
        // Batched per node: the commands of a turn whose keys live on one node leave together.
        enableAutoPipelining: true,
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
  readonly args: readonly (string | number)[];
  readonly consumeArgs: readonly string[];
  readonly peekArgs: readonly string[];
  /** The part of every key of this rule after the caller's key. */
  readonly suffix: string;
}

export class RedisStore implements RemoteStore {
  readonly name = 'redis';
  readonly client: RedisClient;
  /** The last connection error the client reported (for the log line of an outage). */
  private lastConnectionError: Error | null = null;
  private readonly keyPrefix: string;
  private readonly clock: Clock | undefined;
  // Rules are constants of the policy: their shape and arguments are worked out once.
  private readonly shapes = new WeakMap<RateRule, RuleShape>();

  constructor(options: RedisStoreOptions) {
    this.client = options.client;
    this.keyPrefix = options.keyPrefix;
    this.clock = options.clock;
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
    const { args } = this.ruleShape(rule);
    const reply = await this.run('release', SCRIPTS.release, this.keyOf(rule, key), [...args, token]);
    parseFlag('release', reply);
  }

  async reset(rule: RateRule, key: string): Promise<void> {
    parseFlag('reset', await this.run('reset', SCRIPTS.reset, this.keyOf(rule, key), []));
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
    parseFlag('noteLock', await this.run('noteLock', SCRIPTS.noteLock, this.lockIndexOf(rule), args));
  }

  async locks(rule: RateRule, max: number): Promise<readonly LockEntry[]> {
    const now = this.clock ? Math.floor(this.clock.now()) : '';
    return parseLocks(await this.run('locks', SCRIPTS.locks, this.lockIndexOf(rule), [max, now]));
  }

  /** Resolves when Redis answers a PING within the command timeout; rejects with StoreUnavailableError. */
  async ping(): Promise<void> {
    await failAs('ping', this.client.ping());
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
      try {
        await failAs('quit', this.client.quit());
        return;
      } catch {
        // Fall through: a server that does not answer QUIT is simply dropped.
      }
    }
    this.client.disconnect();
  }

  private async decide(rule: RateRule, key: string, consume: boolean): Promise<RateDecision> {
    const { shape, consumeArgs, peekArgs } = this.ruleShape(rule);
    const now = this.clock ? String(Math.floor(this.clock.now())) : '';
    const args = [...(consume ? consumeArgs : peekArgs), now];
    const reply = await this.run(consume ? 'consume' : 'peek', SCRIPTS.decide, this.keyOf(rule, key), args);
    const decision = parseDecision(reply, shape, consume);
    const answer = {
      allowed: decision.allowed,
      limit: rule.limit,
      remaining: decision.remaining,
      resetMs: decision.resetMs,
    };
    return decision.token === null ? answer : { ...answer, token: decision.token };
  }

  /** Every script run goes here: by SHA, its source only after NOSCRIPT (redis-scripts.ts). */
  private run(operation: string, script: Script, key: string, args: readonly (string | number)[]) {
    return failAs(operation, runScript(this.client, script, key, args));
  }

  private ruleShape(rule: RateRule): RuleShape {
    let known = this.shapes.get(rule);
    if (!known) {
      const shape = shapeOf(rule.limit, rule.windowMs);
      const args = shapeArgs(shape);
      // The decide script's ARGV but the time, as the strings they are sent as, made once.
      const decideArgs = (consume: '1' | '0') => [...args, consume, shape.horizonMs].map(String);
      known = {
        shape,
        args,
        consumeArgs: decideArgs('1'),
        peekArgs: decideArgs('0'),
        suffix: `:${LAYOUT_VERSION}:${rule.limit}/${rule.windowMs}`,
      };
      this.shapes.set(rule, known);
    }
    return known;
  }
}

/** Every failure, command timeout or late answer becomes a StoreUnavailableError: never a refusal. */
async function failAs<T>(operation: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw unavailable(operation, error);
  }
}

/** A failure, a command timeout or a malformed reply as the StoreUnavailableError callers expect. */
function unavailable(operation: string, error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`Redis failed on ${operation}: ${reason}`, { cause: error });
}
