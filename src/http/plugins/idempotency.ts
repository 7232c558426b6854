// The Idempotency-Key of a route that takes one: claimed before the limiter, answered once the body is valid.
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { stringify } from 'safe-stable-stringify';
import type { Clock } from '../../clock.ts';
import type { Queryable } from '../../db/database.ts';
import type { IdempotencyKeysRepository, KeyRef } from '../../db/repositories/idempotency-keys.ts';
import { ApiError } from '../../errors.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH, REQUEST_TIMEOUT_MS } from '../../limits.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an `Idempotency-Key` header (docs/rules.md#idempotent-bulk-reassignment). */
    idempotencyKey?: boolean;
  }
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
  | { readonly kind: 'in-flight' }
  | { readonly kind: 'answered'; readonly fingerprint: string; readonly response: string }
  | Claimed;

/** A key this request holds: its answer goes into the transaction of its work. */
interface Claimed {
  readonly kind: 'claimed';
  readonly ref: KeyRef;
  readonly claim: string;
  /** The request body's fingerprint, once the body is valid. */
  fingerprint: string | null;
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

/** Whether a request holds a key another request of its caller holds or answered: the limiter spares it. */
export function isRepeat(request: FastifyRequest): boolean {
  const state = states.get(request);
  return state !== undefined && (state.kind === 'in-flight' || state.kind === 'answered');
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
  if (state?.kind !== 'claimed' || state.fingerprint === null) return undefined;
  const { store, fingerprint } = state;
  return async (outcome, connection) => {
    if (!(await store(connection, fingerprint, JSON.stringify(answer(outcome))))) throw inFlight();
  };
}

function inFlight(): ApiError {
  return new ApiError('IDEMPOTENCY_KEY_IN_FLIGHT', { retryAfter: IN_FLIGHT_RETRY_AFTER });
}

export const idempotencyPlugin = fp<IdempotencyPluginOptions>(
  async (app, options) => {
    const { keys, clock, ttlMs } = options;

    /**
     * Before the limiter: a signed-in caller's valid key is claimed (one short statement of its
     * own, committed before the work, so that every instance sees it), or found held or answered.
     * A key that is not valid is only noted: the limiter charges the request, which then gets its
     * 400 with the fields. A request without a session claims nothing (its 401 comes later).
     */
    const claimKey = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const sent = request.headers[KEY_FIELD];
      if (sent === undefined) return done();
      if (typeof sent !== 'string' || !KEY_PATTERN.test(sent)) {
        states.set(request, INVALID);
        return done();
      }
      const user = request.user;
      if (!user) return done();
      const ref = { userId: user.id, key: sent };
      const claim = randomUUID();
      const now = clock.now();
      keys
        .claim({
          ...ref,
          claim,
          nowMs: now,
          staleBeforeMs: now - REQUEST_TIMEOUT_MS,
          expiresAtMs: now + ttlMs,
        })
        .then((outcome) => {
          if (outcome.kind !== 'claimed') states.set(request, outcome);
          else {
            const store = (connection: Queryable, fingerprint: string, response: string) =>
              keys.storeAnswer(connection, {
                ...ref,
                claim,
                fingerprint,
                response,
                expiresAtMs: clock.now() + ttlMs,
              });
            states.set(request, { kind: 'claimed', ref, claim, fingerprint: null, store });
          }
          done();
        }, done);
    };

    /**
     * Once CSRF, access and the body's schema have passed: a key that is not valid is a 400; a
     * repeat is answered here (409 while its first request is in flight; the stored answer for
     * the same body, 422 for another); a claimed key notes the body's fingerprint for its answer.
     */
    const answerRepeat = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const state = states.get(request);
      if (state === undefined) return done();
      switch (state.kind) {
        case 'invalid':
          return done(new ApiError('IDEMPOTENCY_KEY_INVALID'));
        case 'in-flight':
          return done(inFlight());
        case 'answered':
          if (fingerprint(request.body) !== state.fingerprint)
            return done(new ApiError('IDEMPOTENCY_KEY_REUSED'));
          reply
            .code(200)
            .header(REPLAYED_HEADER, 'true')
            .header('content-type', 'application/json; charset=utf-8')
            .send(state.response);
          return;
        case 'claimed':
          state.fingerprint = fingerprint(request.body);
          return done();
      }
    };

    /**
     * Before any answer of a request that claimed a key leaves: unless it is a 200 (whose
     * transaction stored it), the mark is deleted, so the same key may be sent again at once.
     */
    const settle = (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: Error | null, payload?: unknown) => void,
    ) => {
      const state = states.get(request);
      if (state?.kind !== 'claimed') return done(null, payload);
      if (reply.statusCode === 200) {
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
      if (route.config?.idempotencyKey !== true) return;
      route.onRequest = [...[route.onRequest ?? []].flat(), claimKey];
      route.preHandler = [...[route.preHandler ?? []].flat(), answerRepeat];
      route.onSend = [...[route.onSend ?? []].flat(), settle];
    });
  },
  { name: 'idempotency', dependencies: ['session'] },
);
