// Applies the policy to every /api request first thing: the route's plan, the caller's key, headers, 429s.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { normaliseEmail } from '../../email.ts';
import { type ErrorCode, errorBody } from '../../errors.ts';
import { addressKey } from '../../rate-limit/client-ip.ts';
import { type RateLimitEngine, resetSeconds, then, type Verdict } from '../../rate-limit/engine.ts';
import {
  type Caller,
  type ControlName,
  keyFor,
  planForRoute,
  planForUnmatched,
  type RoutePlan,
} from '../../rate-limit/policy.ts';
import type { MaybePromise } from '../../rate-limit/stores/store.ts';
import { trustedNetworkMatcher } from '../../rate-limit/trusted-networks.ts';

declare module 'fastify' {
  interface FastifyInstance {
    rateLimit: RateLimitEngine;
  }
  interface FastifyRequest {
    /** The caller as the rate limiter sees it (user id, client address key), made on first read. */
    readonly caller: Caller;
    /** The code of the 429 this request was refused with, if it was. */
    rateLimitRefusal: ErrorCode | null;
  }
}

export interface RateLimitPluginOptions {
  readonly engine: RateLimitEngine;
  readonly ipv6Prefix: number;
  /**
   * RATE_LIMIT_TRUSTED_NETWORKS: client addresses in these networks skip the per-address controls
   * (policy.ts' `keyFor`); every other control holds for them.
   */
  readonly trustedNetworks: readonly string[];
  /**
   * The request as a repeat (src/rate-limit/policy.ts, RoutePlan `repeats`), or null when it is
   * none: on a plan with `repeats`, a repeat with a free repeat left is shown the budget and spends
   * none of it. Asked in the route's onRequest hook, so what tells it must have run before (the
   * Idempotency-Key's look, registered first).
   */
  readonly repeatOf?: (request: FastifyRequest) => Repeat | null;
}

/**
 * A request naming a key that another request of its caller holds or answered, as the limiter
 * sees it: how many of the key's free repeats were taken when the key was read, and the way to
 * take one more.
 */
export interface Repeat {
  readonly freeTaken: number;
  /** Takes one of the key's first `free` repeats, atomically across instances; false when none is left. */
  takeFree(free: number): Promise<boolean>;
}

/** What a request the limiter charged on a plan with `repeats` spent: what giving it back needs. */
interface Admission {
  readonly engine: RateLimitEngine;
  readonly name: ControlName;
  readonly key: string;
  readonly token: number;
  /** The plan's free repeats per key. */
  readonly free: number;
}

/** The units spent by requests of plans with `repeats`, for settleLateRepeat; no property on every request. */
const admissions = new WeakMap<FastifyRequest, Admission>();

/**
 * The caller of one request; the client address (Fastify's `request.ip`) is keyed only if a control
 * needs it. It also holds the code the limiter refused the request with (`request.rateLimitRefusal`
 * reads and writes this field), so that the limiter sets one property per request, not two (see
 * the plugin).
 */
class RequestCaller implements Caller {
  refusal: ErrorCode | null = null;
  private key: string | null = null;
  private trusted: boolean | null = null;
  private readonly request: FastifyRequest;
  private readonly ipv6Prefix: number;
  private readonly isTrusted: ((address: string) => boolean) | null;

  constructor(request: FastifyRequest, ipv6Prefix: number, isTrusted: ((address: string) => boolean) | null) {
    this.request = request;
    this.ipv6Prefix = ipv6Prefix;
    this.isTrusted = isTrusted;
  }

  get userId(): number | null {
    return this.request.user?.id ?? null;
  }

  get account(): string | null {
    const user = this.request.user;
    return user ? normaliseEmail(user.email) : null;
  }

  /** The rate limiter does not read device cookies; the routes that need the device set it (callerWith). */
  get deviceId(): string | null {
    return null;
  }

  ipKey(): string {
    this.key ??= addressKey(this.request.ip ?? '', this.ipv6Prefix);
    return this.key;
  }

  /** The address Fastify derived (through a trusted proxy or from the socket), matched once. */
  inTrustedNetwork(): boolean {
    if (this.isTrusted === null) return false;
    this.trusted ??= this.isTrusted(this.request.ip ?? '');
    return this.trusted;
  }
}

/** What a hook of this plugin asks: the verdict to apply, or null when no control applies. */
type Decide = (request: FastifyRequest) => MaybePromise<Verdict | null> | null;

/**
 * A hook (onRequest or preValidation) that applies `decide`'s verdict: an admitted one writes its
 * headers and lets the request go on, a refused one answers 429 and ends the request there. A
 * store failure (closed mode) rejects, and Fastify hands it to the error handler: a 503.
 */
function verdictHook(decide: Decide) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const outcome = decide(request);
    if (outcome instanceof Promise) outcome.then((verdict) => apply(verdict, reply, done), done);
    else apply(outcome, reply, done);
  };
}

function apply(verdict: Verdict | null, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  // Refused: answered here, and the hooks after this one (body, CSRF, access, validation) never run.
  if (verdict?.refused) {
    sendRefusal(reply, verdict);
    return;
  }
  // Admitted, or refused by a control in shadow mode: either way the headers tell the real state.
  if (verdict) writeRateLimitHeaders(reply, verdict);
  done();
}

export const rateLimitPlugin = fp<RateLimitPluginOptions>(
  async (app, options) => {
    const { engine } = options;
    const isTrusted = trustedNetworkMatcher(options.trustedNetworks);
    const kCaller = Symbol('rate-limit.caller');
    app.decorate('rateLimit', engine);
    // One property set per request (Fastify sets each decorated value through a megamorphic keyed
    // store, about 240 instructions); the rest are getters and setters on the prototype.
    type WithCaller = FastifyRequest & { [kCaller]: RequestCaller | null };
    const callerOf = (request: WithCaller): RequestCaller =>
      (request[kCaller] ??= new RequestCaller(request, options.ipv6Prefix, isTrusted));
    app.decorateRequest(kCaller, null);
    app.decorateRequest('caller', {
      getter() {
        return callerOf(this as WithCaller);
      },
    });
    app.decorateRequest('rateLimitRefusal', {
      getter() {
        return (this as WithCaller)[kCaller]?.refusal ?? null;
      },
      setter(code: ErrorCode | null) {
        callerOf(this as WithCaller).refusal = code;
      },
    });

    /** What a plan decides for a request before its body is read; null when this plugin applies none. */
    const decideFor = (plan: RoutePlan): Decide | null => {
      switch (plan.kind) {
        case 'exempt':
          return null;
        // The sign-ins apply their login plan themselves: their routes' own hooks ask the login
        // layer's failure flow (src/login/), whose budgets only the credential check can spend.
        case 'login':
          return null;
        case 'controls': {
          // Policy routes list one control each; a route with several would consume them in order.
          const name = plan.controls[0]!;
          const { control } = engine.controls[name];
          const { repeats } = plan;
          const repeatOf = options.repeatOf;
          // Asked only where the plan spares repeats.
          if (repeats === undefined || repeatOf === undefined)
            return (request) => {
              // No key: a per-address control and a caller in a trusted network; nothing applies.
              const key = keyFor(control, request.caller);
              return key === null ? null : engine.consume(name, key);
            };
          const { free } = repeats;
          /** Spends a unit as any request does, noting it for a request found a repeat later. */
          const charge = (request: FastifyRequest, key: string) =>
            then(engine.consume(name, key), (verdict) => {
              const { token } = verdict.decision;
              if (!verdict.refused && token !== undefined)
                admissions.set(request, { engine, name, key, token, free });
              return verdict;
            });
          /**
           * A repeat with a free one left: the limiter looks first (a store that is away answers
           * 503 before anything is written), then the repeat takes its free one; if a copy took
           * the last meanwhile, it is charged as a new request (and refused when none is left).
           */
          const spareOrCharge = async (request: FastifyRequest, key: string, repeat: Repeat) => {
            const verdict = await engine.peek(name, key);
            // Spared: its headers show the budget as it is, and it goes on even when the budget is spent.
            if (await repeat.takeFree(free)) return { ...verdict, refused: false };
            return charge(request, key);
          };
          return (request) => {
            const key = keyFor(control, request.caller);
            if (key === null) return null;
            const repeat = repeatOf(request);
            // A repeat past its free ones spends as a new request, and writes nothing if refused.
            if (repeat === null || repeat.freeTaken >= free) return charge(request, key);
            return spareOrCharge(request, key, repeat);
          };
        }
        case 'generic': {
          const authenticated = engine.controls[plan.authenticated].control;
          const unauthenticated = engine.controls[plan.unauthenticated].control;
          return (request) => {
            const caller = request.caller;
            const control = caller.userId !== null ? authenticated : unauthenticated;
            // A signed-out caller in a trusted network has no generic budget (docs/operations.md).
            const key = keyFor(control, caller);
            return key === null ? null : engine.consume(control.name, key);
          };
        }
      }
    };

    // A route's plan is fixed when the route is registered (never looked up per request), and its
    // hook is the route's own: an exempt route has none. Route-level onRequest hooks run after the
    // app's (security headers, cookies, session), so the generic bucket can key by user.
    app.addHook('onRoute', (route) => {
      const decide = decideFor(planOf(route));
      if (decide) route.onRequest = [...[route.onRequest ?? []].flat(), verdictHook(decide)];
    });

    // A request that matches no route has its plan from its URL: an /api 404 spends the generic
    // bucket. Routed requests pass this hook by (their route's hook above does the work).
    const unmatched = new Map<RoutePlan, ReturnType<typeof verdictHook> | null>();
    app.addHook('onRequest', (request, reply, done) => {
      if (!request.is404) return done();
      const plan = planForUnmatched(request.url);
      let hook = unmatched.get(plan);
      if (hook === undefined) {
        const decide = decideFor(plan);
        hook = decide && verdictHook(decide);
        unmatched.set(plan, hook);
      }
      if (hook) hook(request, reply, done);
      else done();
    });
  },
  { name: 'rate-limit', dependencies: ['session'] },
);

/**
 * For a request the limiter charged as new whose key was then found held (a copy claimed it
 * between this request's look and its own claim): a repeat after all. If one of the key's free
 * repeats is left it takes it, the unit goes back and the headers show the budget as it is;
 * otherwise the unit stays spent, as it would have been for a repeat past its free ones. A
 * failure leaves the unit spent (logged): the request is answered all the same.
 */
export async function settleLateRepeat(
  request: FastifyRequest,
  reply: FastifyReply,
  repeat: Repeat,
): Promise<void> {
  const admission = admissions.get(request);
  // Nothing was spent: no control applied, or one in shadow mode let it through.
  if (admission === undefined) return;
  admissions.delete(request);
  const { engine, name, key, token, free } = admission;
  try {
    if (repeat.freeTaken >= free || !(await repeat.takeFree(free))) return;
    await engine.release(name, key, token);
    writeRateLimitHeaders(reply, await engine.peek(name, key));
  } catch (error) {
    request.log.error({ err: error }, 'rate limit: the unit of a late repeat not given back');
  }
}

/** A route's plan, from its method and pattern: the HEAD Fastify adds for a GET is the same resource. */
function planOf(route: Pick<RouteOptions, 'method' | 'url'>): RoutePlan {
  const first = Array.isArray(route.method) ? route.method[0]! : route.method;
  return planForRoute(first === 'HEAD' ? 'GET' : first, route.url);
}

/** The draft-06 triple and the current `RateLimit-Policy`/`RateLimit` pair, for one control. */
function writeRateLimitHeaders(reply: FastifyReply, { bound, decision }: Verdict): number {
  const reset = resetSeconds(decision);
  // One call per header, not an object of them: the hot path allocates no headers object.
  reply
    .header('ratelimit-limit', bound.limitHeader)
    .header('ratelimit-remaining', decision.remaining)
    .header('ratelimit-reset', reset)
    .header('ratelimit-policy', bound.policyHeader)
    .header('ratelimit', `"${bound.control.name}";r=${decision.remaining};t=${reset}`);
  return reset;
}

/** Answers 429 with the control's code, its headers, Retry-After and a body saying how long to wait. */
export function sendRefusal(reply: FastifyReply, verdict: Verdict): FastifyReply {
  const retryAfter = writeRateLimitHeaders(reply, verdict);
  reply.request.rateLimitRefusal = verdict.bound.control.code;
  return reply
    .code(429)
    .headers({ 'retry-after': retryAfter, 'cache-control': 'no-store' })
    .send(errorBody(verdict.bound.control.code, { retryAfter }));
}
