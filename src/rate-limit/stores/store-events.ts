// What the store stack reports (decision latency, outages, remote errors), on node:diagnostics_channel.
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { RateLimitStore, StoreFailureMode, StoreUnavailableError } from './store.ts';

/*
 * Every message names the stack's store (`store`, the object the app decides with): a process may
 * hold several apps (tests, several instances side by side), and each listens to its own only.
 */

/** A decision that waited for the remote store, timed from the call until it settled (failed ones too). */
export interface DecisionEvent {
  readonly store: RateLimitStore;
  /** The rule's name (`api-authenticated`, …). */
  readonly control: string;
  readonly operation: 'consume' | 'peek';
  readonly seconds: number;
}

/** The remote store became unavailable (the failure mode applies), or answers again. */
export type StoreStateEvent =
  | {
      readonly store: RateLimitStore;
      readonly state: 'degraded';
      readonly mode: StoreFailureMode;
      /** Why the operation that noticed failed. */
      readonly reason: string;
    }
  | {
      readonly store: RateLimitStore;
      readonly state: 'recovered';
      readonly mode: StoreFailureMode;
      /** How long it was unavailable, by the store's clock. */
      readonly downMs: number;
    };

/** One operation of the remote store (decision, give-back, reset, probe) that failed or timed out. */
export interface RemoteErrorEvent {
  readonly store: RateLimitStore;
  readonly operation:
    | 'consume'
    | 'peek'
    | 'release'
    | 'reset'
    | 'noteLock'
    | 'locks'
    | 'putOnce'
    | 'takeOnce'
    | 'claimOnce'
    | 'ping';
  readonly error: StoreUnavailableError;
}

const STORE_CHANNELS = {
  decision: 'tp:rate-limit:decision',
  storeState: 'tp:rate-limit:store-state',
  redisError: 'tp:rate-limit:redis-error',
} as const;

/*
 * Held here for the life of the process: publishers ask `hasSubscribers` before they build a
 * message, so a store nobody observes pays one property read per remote decision, and nothing at
 * all per memory decision (the memory store publishes nothing).
 */
export const decisionChannel = channel(STORE_CHANNELS.decision);
export const storeStateChannel = channel(STORE_CHANNELS.storeState);
export const redisErrorChannel = channel(STORE_CHANNELS.redisError);

export interface StoreObserver {
  decision?(event: DecisionEvent): void;
  storeState?(event: StoreStateEvent): void;
  redisError?(event: RemoteErrorEvent): void;
}

/** Subscribes `observer` to the events of `store` (and of no other); returns what unsubscribes it. */
export function observeStore(store: RateLimitStore, observer: StoreObserver): () => void {
  const subscriptions: [string, (message: unknown) => void][] = [];
  const listen = <T extends { store: RateLimitStore }>(name: string, handler?: (event: T) => void) => {
    if (!handler) return;
    const onMessage = (message: unknown) => {
      if ((message as T).store === store) handler.call(observer, message as T);
    };
    subscribe(name, onMessage);
    subscriptions.push([name, onMessage]);
  };
  listen(STORE_CHANNELS.decision, observer.decision);
  listen(STORE_CHANNELS.storeState, observer.storeState);
  listen(STORE_CHANNELS.redisError, observer.redisError);
  return () => {
    for (const [name, onMessage] of subscriptions.splice(0)) unsubscribe(name, onMessage);
  };
}
