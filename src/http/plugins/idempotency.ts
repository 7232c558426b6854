// A route's Idempotency-Key: read before the limiter, claimed or answered once the body is valid.
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { stringify } from 'safe-stable-stringify';
import type { Clock } from '../../clock.ts';
import type { Queryable } from '../../db/database.ts';
import type { IdempotencyKeysRepository, KeyHolder, KeyRef } from '../../db/repositories/idempotency-keys.ts';
import { ApiError } from '../../errors.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH, REQUEST_TIMEOUT_MS } from '../../limits.ts';
import { type Repeat, settleLateRepeat } from './rate-limit.ts';

/**
 * A route whose success is not a bare 200 (a create's 201 with its Location): the status its
 * answer is stored for and replayed with, and the headers a replay gets from the stored body.
 */
export interface IdempotentAnswer {
  readonly status: number;
  readonly headers?: (body: unknown) => Record<string, string>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an `Idempotency-Key` header (docs/rules.md#idempotent-bulk-reassignment). */
    idempotencyKey?: boolean | IdempotentAnswer;
  }
}

/** A bulk reassignment's answer: a 200 and its body. */
const PLAIN_ANSWER: IdempotentAnswer = { status: 200 };

function answerOf(request: FastifyRequest): IdempotentAnswer {
  const setting = request.routeOptions.config?.idempotencyKey;
  return typeof setting === 'object' ? setting : PLAIN_ANSWER;
}

/** The request header naming a key, and the header of an answer replayed from one. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** Node gives request headers in lower case. */
const KEY_FIELD = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/** What a 409 IDEMPOTENCY_KEY_IN_FLIGHT asks a client to wait, in seconds. */
export const IN_FLIGHT_RETRY_AFTER = 1;

/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY_PATTERN = new RegExp(`^[\\x20-\\x7e]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);

export interface IdempotencyPluginOptions {
  readonly keys: IdempotencyKeysRepository;
  readonly clock: Clock;
  /** How long an answer is replayed (IDEMPOTENCY_TTL). */
  readonly ttlMs: number;
  /**
   * A test hook (TEST_HOLD_COMMITTED_ANSWERS, NODE_ENV=test only): a claimed request answered 200,
   * its transaction committed, logs a line and is never answered, for a test to kill the process
   * between the commit and the answer.
   */
  readonly holdCommittedAnswers?: boolean;
}

/** What the key of one request turned out to be; requests without the header have none. */
type KeyState =
  | { readonly kind: 'invalid' }
  /** Free when looked at: the request claims it once its checks have passed. */
  | { readonly kind: 'free'; readonly ref: KeyRef }
  | HeldKey
  | Claimed;

/**
 * A key another request of the caller holds or answered: this request is a repeat. Its repeats are
 * free on the route that claimed it only: a key claimed on another route (a create's, on the
 * generic budget) is charged here as a new request, so it cannot buy free bulk reassignments or
 * imports.
 */
class HeldKey implements Repeat {
  readonly kind = 'held';
  readonly holder: KeyHolder;
  private readonly keys: IdempotencyKeysRepository;
  private readonly ref: KeyRef;
  private readonly sameRoute: boolean;

  constructor(keys: IdempotencyKeysRepository, ref: KeyRef, holder: KeyHolder, route: string) {
    this.keys = keys;
    this.ref = ref;
    this.holder = holder;
    this.sameRoute = holder.route === route;
  }

  get freeTaken(): number {
    return this.sameRoute ? this.holder.freeRepeats : Number.POSITIVE_INFINITY;
  }

  /** One of the free repeats of the row this request found (not of a later claim of the key). */
  takeFree(free: number): Promise<boolean> {
    const { claim } = this.holder;
    if (claim === null || !this.sameRoute) return Promise.resolve(false);
    return this.keys.takeFreeRepeat({ ...this.ref, claim, free });
  }
}

/** The route a request's key is claimed on: its method and pattern. */
const routeOf = (request: FastifyRequest) => `${request.method} ${request.routeOptions.url}`;

/** A key this request holds: its answer goes into the transaction of its work. */
interface Claimed {
  readonly kind: 'claimed';
  readonly ref: KeyRef;
  readonly claim: string;
  /** The request body's fingerprint (the key is claimed once the body is valid). */
  readonly fingerprint: string;
  /** Stores the answer with the fingerprint on `connection`; false when the claim is no longer this request's. */
  readonly store: (connection: Queryable, fingerprint: string, response: string) => Promise<boolean>;
}

/**
 * The key state of the requests that sent one. Kept beside the request rather than decorated on
 * it: Fastify sets a decorated value on every request of every route, and a request without the
 * header must pay nothing.
 */
const states = new WeakMap<FastifyRequest, KeyState>();
const INVALID: KeyState = { kind: 'invalid' };

/** SHA-256 of the body's canonical JSON (keys sorted at every level): equal bodies, equal prints. */
export function fingerprint(body: unknown): string {
  return createHash('sha256')
    .update(stringify(body) ?? 'null')
    .digest('hex');
}

/**
 * The request as a repeat, when its key was found held or answered by another request of its
 * caller; null otherwise. The limiter asks it (its plan says how many repeats of a key are free).
 */
export function repeatOf(request: FastifyRequest): Repeat | null {
  const state = states.get(request);
  return state instanceof HeldKey ? state : null;
}

/**
 * For the handler of a route that takes a key: the work that stores `answer(outcome)` as the key's
 * answer, to run in the transaction of the route's change; undefined when the request claimed no
 * key. If the claim was taken over meanwhile (its mark went stale), it throws
 * IDEMPOTENCY_KEY_IN_FLIGHT, and the change rolls back: a key is applied once.
 */
export function storingAnswer<T>(
  request: FastifyRequest,
  answer: (outcome: T) => unknown,
): ((outcome: T, connection: Queryable) => Promise<void>) | undefined {
  const state = states.get(request);
  if (state?.kind !== 'claimed') return undefined;
  const { store, fingerprint } = state;
  return async (outcome, connection) => {
    if (!(await store(connection, fingerprint, JSON.stringify(answer(outcome))))) throw inFlight();
  };
}

function inFlight(): ApiError {
  return new ApiError('IDEMPOTENCY_KEY_IN_FLIGHT', { retryAfter: IN_FLIGHT_RETRY_AFTER });
}

/** A repeat's answer: 409 while its first request is in flight; the stored answer for the same body, 422 for another. */
function answerHeld(
  request: FastifyRequest,
  reply: FastifyReply,
  holder: KeyHolder,
  bodyPrint: string,
  done: HookHandlerDoneFunction,
): void {
  if (holder.kind === 'in-flight') {
    done(inFlight());
    return;
  }
  if (bodyPrint !== holder.fingerprint) {
    done(new ApiError('IDEMPOTENCY_KEY_REUSED'));
    return;
  }
  const { status, headers } = answerOf(request);
  if (headers) reply.headers(headers(JSON.parse(holder.response)));
  reply
    .code(status)
    .header(REPLAYED_HEADER, 'true')
    .header('content-type', 'application/json; charset=utf-8')
    .send(holder.response);
}

export const idempotencyPlugin = fp<IdempotencyPluginOptions>(
  async (app, options) => {
    const { keys, clock, ttlMs } = options;

    /**
     * Before the limiter: a signed-in caller's valid key is read (one short SELECT): held or
     * answered by another request, this request is a repeat, which the limiter may spare; else it
     * is free, and claimed only once the limiter and the other checks let the request through, so
     * that a refused request writes nothing. A key that is not valid is only noted: the limiter
     * charges the request, which then gets its 400 with the fields. A request without a session
     * reads nothing (its 401 comes later).
     */
    const lookAtKey = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const sent = request.headers[KEY_FIELD];
      if (sent === undefined) return done();
      if (typeof sent !== 'string' || !KEY_PATTERN.test(sent)) {
        states.set(request, INVALID);
        return done();
      }
      const user = request.user;
      if (!user) return done();
      const ref = { userId: user.id, key: sent };
      const now = clock.now();
      keys.find({ ...ref, nowMs: now, staleBeforeMs: now - REQUEST_TIMEOUT_MS }).then((holder) => {
        states.set(
          request,
          holder === null ? { kind: 'free', ref } : new HeldKey(keys, ref, holder, routeOf(request)),
        );
        done();
      }, done);
    };

    /**
     * Claims a key that was free when looked at: one short statement of its own, committed before
     * the work, so that every instance sees it. If a copy claimed it since, this request is a
     * repeat after all: the limiter's layer settles what it spent (settleLateRepeat).
     */
    const claimFreeKey = async (
      request: FastifyRequest,
      reply: FastifyReply,
      ref: KeyRef,
      bodyPrint: string,
    ): Promise<KeyState> => {
      const claim = randomUUID();
      const now = clock.now();
      const route = routeOf(request);
      const outcome = await keys.claim({
        ...ref,
        claim,
        route,
        nowMs: now,
        staleBeforeMs: now - REQUEST_TIMEOUT_MS,
        expiresAtMs: now + ttlMs,
      });
      if (outcome.kind !== 'claimed') {
        const held = new HeldKey(keys, ref, outcome, route);
        await settleLateRepeat(request, reply, held);
        return held;
      }
      const store = (connection: Queryable, fingerprint: string, response: string) =>
        keys.storeAnswer(connection, {
          ...ref,
          claim,
          fingerprint,
          response,
          expiresAtMs: clock.now() + ttlMs,
        });
      return { kind: 'claimed', ref, claim, fingerprint: bodyPrint, store };
    };

    /**
     * Once CSRF, access and the body's schema have passed: a key that is not valid is a 400; a
     * free key is claimed; a repeat is answered here (409 while its first request is in flight;
     * the stored answer for the same body, 422 for another).
     */
    const answerRepeat = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const state = states.get(request);
      if (state === undefined) return done();
      switch (state.kind) {
        case 'invalid':
          return done(new ApiError('IDEMPOTENCY_KEY_INVALID'));
        case 'free': {
          const bodyPrint = fingerprint(request.body);
          claimFreeKey(request, reply, state.ref, bodyPrint).then((claimed) => {
            states.set(request, claimed);
            if (claimed instanceof HeldKey) answerHeld(request, reply, claimed.holder, bodyPrint, done);
            else done();
          }, done);
          return;
        }
        case 'held':
          return answerHeld(request, reply, state.holder, fingerprint(request.body), done);
        case 'claimed':
          return done();
      }
    };

    /**
     * Before any answer of a request that claimed a key leaves: unless it is the route's success
     * (a 200, a create's 201: its transaction stored it), the mark is deleted, so the same key
     * may be sent again at once.
     */
    const settle = (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: Error | null, payload?: unknown) => void,
    ) => {
      const state = states.get(request);
      if (state?.kind !== 'claimed') return done(null, payload);
      if (reply.statusCode === answerOf(request).status) {
        if (!options.holdCommittedAnswers) return done(null, payload);
        request.log.warn({ key: state.ref.key }, 'idempotency test hook: answer held after commit');
        return; // never answered: the test kills the process now
      }
      keys.release({ ...state.ref, claim: state.claim }).then(
        () => done(null, payload),
        (error: unknown) => {
          // The mark then blocks the key until it is stale; the answer goes out all the same.
          request.log.error({ err: error }, 'idempotency key not released');
          done(null, payload);
        },
      );
    };

    app.addHook('onRoute', (route) => {
      if (!route.config?.idempotencyKey) return;
      route.onRequest = [...[route.onRequest ?? []].flat(), lookAtKey];
      route.preHandler = [...[route.preHandler ?? []].flat(), answerRepeat];
      route.onSend = [...[route.onSend ?? []].flat(), settle];
    });
  },
  { name: 'idempotency', dependencies: ['session'] },
);
