// Applies the policy to every /api request first thing: the route's plan, the caller's key, headers, 429s.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { normaliseEmail } from '../../email.ts';
import { type ErrorCode, errorBody } from '../../errors.ts';
import { addressKey } from '../../rate-limit/client-ip.ts';
import { type RateLimitEngine, resetSeconds, then, type Verdict } from '../../rate-limit/engine.ts';
import { LoginFlow, longestRefusal } from '../../rate-limit/login-flow.ts';
import {
  type Caller,
  keyFor,
  planForRoute,
  planForUnmatched,
  type RoutePlan,
} from '../../rate-limit/policy.ts';
import type { MaybePromise } from '../../rate-limit/stores/store.ts';
import { trustedNetworkMatcher } from '../../rate-limit/trusted-networks.ts';
import type { SecurityEventSink } from '../../security-event.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The login-failure limiter of a route under a `login` plan. */
    loginFlow?: LoginFlow;
  }
  interface FastifyInstance {
    rateLimit: RateLimitEngine;
  }
  interface FastifyRequest {
    /** The caller as the rate limiter sees it (user id, client address key), made on first read. */
    readonly caller: Caller;
    /** The code of the 429 this request was refused with, if it was. */
    rateLimitRefusal: ErrorCode | null;
    /**
     * A login whose address is locked: its 429 waits for the body, so that it can also cover the
     * account's lock (contract §8), and is answered first thing after it, or instead of any error
     * the body raises (`answerPendingLoginRefusal`).
     */
    pendingLoginRefusal: Verdict | null;
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
  /** Where the login flow reports the locks that start (one event per lock). */
  readonly events: SecurityEventSink;
  /**
   * Whether a login request may be a known-device attempt (it carries a device cookie whose
   * signature holds). Such a request is not refused by the account or address before the handler,
   * which alone can tell whether the cookie belongs to the account the body names.
   */
  readonly mayBeKnownDevice: (request: FastifyRequest) => boolean;
  /**
   * Whether a request is a repeat (src/rate-limit/policy.ts, RoutePlan): on a plan with `repeats:
   * 'free'` it is shown the budget and spends none of it. Asked in the route's onRequest hook, so
   * what tells it must have run before (the Idempotency-Key's claim, registered first).
   */
  readonly isRepeat?: (request: FastifyRequest) => boolean;
}

/**
 * The caller of one request; the client address (Fastify's `request.ip`) is keyed only if a control
 * needs it. It also holds what the limiter decided for the request (`request.rateLimitRefusal`,
 * `request.pendingLoginRefusal` read and write these fields), so that the limiter sets one
 * property per request, not three (see the plugin).
 */
class RequestCaller implements Caller {
  refusal: ErrorCode | null = null;
  pendingLoginRefusal: Verdict | null = null;
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

/**
 * The login's look at its address, before the body: a refusal is kept for the account's look
 * (nothing else runs before it but the body's reading, up to the body limit).
 */
function addressLockHook(decide: Decide) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const keep = (verdict: Verdict | null) => {
      if (verdict?.refused) request.pendingLoginRefusal = verdict;
      done();
    };
    const outcome = decide(request);
    if (outcome instanceof Promise) outcome.then(keep, done);
    else keep(outcome);
  };
}

/**
 * Answers a login's pending address refusal in place of an error its body raised (too large, not
 * JSON): the rate limiter's answer comes first (contract §3). False when there is none.
 */
export function answerPendingLoginRefusal(request: FastifyRequest, reply: FastifyReply): boolean {
  const verdict = request.pendingLoginRefusal;
  if (!verdict) return false;
  sendRefusal(reply, verdict);
  return true;
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
    app.decorateRequest('pendingLoginRefusal', {
      getter() {
        return (this as WithCaller)[kCaller]?.pendingLoginRefusal ?? null;
      },
      setter(verdict: Verdict | null) {
        callerOf(this as WithCaller).pendingLoginRefusal = verdict;
      },
    });

    /** What a plan decides for a request before its body is read; null for an exempt plan. */
    const decideFor = (plan: RoutePlan, flow: LoginFlow | null): Decide | null => {
      switch (plan.kind) {
        case 'exempt':
          return null;
        case 'login': {
          // The address's lock; the account's needs the body (below). A plan without known-device
          // controls (the passkey sign-in) looks at it whatever cookie comes.
          const knownDevices = plan.knownDevice.length > 0;
          return (request) =>
            knownDevices && options.mayBeKnownDevice(request)
              ? null
              : flow!.lockedBefore(request.caller, 'ip');
        }
        case 'controls': {
          // Policy routes list one control each; a route with several would consume them in order.
          const { control } = engine.controls[plan.controls[0]!];
          // Asked only where the plan spares repeats.
          const isRepeat = plan.repeats === 'free' ? options.isRepeat : undefined;
          return (request) => {
            // No key: a per-address control and a caller in a trusted network; nothing applies.
            const key = keyFor(control, request.caller);
            if (key === null) return null;
            if (!isRepeat?.(request)) return engine.consume(control.name, key);
            // A repeat's headers show the budget as it is, and it goes on even when the budget is spent.
            return then(engine.peek(control.name, key), (verdict) => ({ ...verdict, refused: false }));
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
      const plan = planOf(route);
      let flow: LoginFlow | null = null;
      if (plan.kind === 'login') {
        flow = new LoginFlow({ engine, plan, events: options.events });
        // The login handler spends or gives back what the password check decides.
        route.config = { ...route.config, loginFlow: flow };
        // The account's lock needs the submitted email, so it is looked at once the body is
        // parsed, first among the route's preValidation hooks: before CSRF and field validation.
        // A locked address's refusal waited for it: the 429 is whichever of the two ends last.
        const lockedAccount = flow;
        const accountLock = verdictHook((request) => {
          const address = request.pendingLoginRefusal;
          const email = (request.body as { email?: unknown } | undefined)?.email;
          if (typeof email !== 'string' || options.mayBeKnownDevice(request)) return address;
          return then(lockedAccount.lockedBefore(request.caller, 'account', email), (account) =>
            longestRefusal(address, account),
          );
        });
        route.preValidation = [accountLock, ...[route.preValidation ?? []].flat()];
        const addressLook = decideFor(plan, flow)!;
        route.onRequest = [...[route.onRequest ?? []].flat(), addressLockHook(addressLook)];
        return;
      }
      const decide = decideFor(plan, flow);
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
        const decide = decideFor(plan, null);
        hook = decide && verdictHook(decide);
        unmatched.set(plan, hook);
      }
      if (hook) hook(request, reply, done);
      else done();
    });
  },
  { name: 'rate-limit', dependencies: ['session'] },
);

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
