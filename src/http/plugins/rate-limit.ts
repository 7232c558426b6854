// Applies the policy to every request first thing: the route's plan, the caller's key, headers, 429s.
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { normaliseEmail } from '../../auth/email.ts';
import type { SecurityEventSink } from '../../auth/security-event.ts';
import { type ErrorCode, errorBody } from '../../errors.ts';
import { addressKey, clientAddress, type TrustProxy } from '../../rate-limit/client-ip.ts';
import { type RateLimitEngine, resetSeconds, type Verdict } from '../../rate-limit/engine.ts';
import { LoginFlow } from '../../rate-limit/login-flow.ts';
import {
  type Caller,
  keyFor,
  planForRoute,
  planForUnmatched,
  type RoutePlan,
} from '../../rate-limit/policy.ts';
import { hookList } from '../hook-list.ts';
import { ANSWERED, asHook, type RequestStep, type StepResult } from '../request-pipeline.ts';

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
  }
}

export interface RateLimitPluginOptions {
  readonly engine: RateLimitEngine;
  readonly trustProxy: TrustProxy;
  readonly ipv6Prefix: number;
  /** Where the login flow reports locks that start and refused known devices. */
  readonly events: SecurityEventSink;
  /**
   * Whether a login request may be a known-device attempt (it carries a device cookie whose
   * signature holds). Such a request is not refused by the account or address before the handler,
   * which alone can tell whether the cookie belongs to the account the body names.
   */
  readonly mayBeKnownDevice: (request: FastifyRequest) => boolean;
}

/** The caller of one request; the client address is worked out only if a control needs it. */
class RequestCaller implements Caller {
  private key: string | null = null;
  private readonly request: FastifyRequest;
  private readonly options: RateLimitPluginOptions;

  constructor(request: FastifyRequest, options: RateLimitPluginOptions) {
    this.request = request;
    this.options = options;
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
    if (this.key === null) {
      const { request, options } = this;
      const address = clientAddress(request.raw.socket.remoteAddress, request.headers, options.trustProxy);
      this.key = addressKey(address, options.ipv6Prefix);
    }
    return this.key;
  }
}

export const rateLimitPlugin = fp<RateLimitPluginOptions>(
  async (app, options) => {
    const { engine } = options;
    const kCaller = Symbol('rate-limit.caller');
    app.decorate('rateLimit', engine);
    app.decorateRequest(kCaller, null);
    app.decorateRequest('caller', {
      getter() {
        const request = this as FastifyRequest & { [kCaller]: Caller | null };
        request[kCaller] ??= new RequestCaller(request, options);
        return request[kCaller];
      },
    });
    app.decorateRequest('rateLimitRefusal', null);

    /** The step a plan adds to a route's pipeline: it spends or looks at the caller's budget; null when exempt. */
    const stepFor = (plan: RoutePlan, flow: LoginFlow | null): RequestStep | null => {
      switch (plan.kind) {
        case 'exempt':
          return null;
        case 'login':
          return (request, reply) => {
            if (options.mayBeKnownDevice(request)) return undefined;
            return applyVerdict(flow!.lockedBefore(request.caller, 'ip'), reply);
          };
        case 'controls': {
          // Policy routes list one control each; a route with several would consume them in order.
          const { control } = engine.controls[plan.controls[0]!];
          return (request, reply) =>
            applyVerdict(engine.consume(control.name, keyFor(control, request.caller)!), reply);
        }
        case 'generic': {
          const authenticated = engine.controls[plan.authenticated].control;
          const unauthenticated = engine.controls[plan.unauthenticated].control;
          return (request, reply) => {
            const caller = request.caller;
            const control = caller.userId !== null ? authenticated : unauthenticated;
            return applyVerdict(engine.consume(control.name, keyFor(control, caller)!), reply);
          };
        }
      }
    };

    /** The account's lock, looked at once the body names it (a known device is left to the handler). */
    const accountLockCheck =
      (flow: LoginFlow): RequestStep =>
      (request, reply) => {
        const email = (request.body as { email?: unknown } | undefined)?.email;
        if (typeof email !== 'string' || options.mayBeKnownDevice(request)) return undefined;
        return applyVerdict(flow.lockedBefore(request.caller, 'account', email), reply);
      };

    // A route's plan is fixed when the route is registered: nothing per request looks the route
    // up, and an exempt route has no step at all.
    app.addHook('onRoute', (route) => {
      const plan = planOf(route);
      if (plan.kind !== 'login') return;
      const flow = new LoginFlow({ engine, plan, events: options.events });
      // The login handler spends or gives back what the password check decides.
      route.config = { ...route.config, loginFlow: flow };
      // The account's lock needs the submitted email, so it is looked at once the body is parsed,
      // first among the route's preValidation hooks: before CSRF and field validation, as for
      // every other limiter, a locked account gets its 429.
      route.preValidation = [asHook(accountLockCheck(flow)), ...hookList(route.preValidation)];
    });

    // In each route's pipeline after the session (the generic bucket keys by user). A path that
    // matches no route has its plan from its URL: an /api 404 spends the generic bucket.
    const unmatchedSteps = new Map<RoutePlan, RequestStep | null>();
    app.requestPipeline.add((route) => {
      if (route) return stepFor(planOf(route), route.config?.loginFlow ?? null);
      return (request, reply) => {
        const plan = planForUnmatched(request.url);
        let step = unmatchedSteps.get(plan);
        if (step === undefined) {
          step = stepFor(plan, null);
          unmatchedSteps.set(plan, step);
        }
        return step === null ? undefined : step(request, reply);
      };
    });
  },
  { name: 'rate-limit', dependencies: ['session', 'request-pipeline'] },
);

/** A route's plan, from its method and pattern: the HEAD Fastify adds for a GET is the same resource. */
function planOf(route: Pick<RouteOptions, 'method' | 'url'>): RoutePlan {
  const first = Array.isArray(route.method) ? route.method[0]! : route.method;
  return planForRoute(first === 'HEAD' ? 'GET' : first, route.url);
}

/** Writes an admitted verdict's headers, or answers a refused one (a Redis verdict once it is in). */
function applyVerdict(outcome: Verdict | null | Promise<Verdict | null>, reply: FastifyReply): StepResult {
  // A store failure (closed mode) rejects, and the pipeline hands it to the error handler: a 503.
  return outcome instanceof Promise
    ? outcome.then((verdict) => apply(verdict, reply))
    : apply(outcome, reply);
}

function apply(verdict: Verdict | null, reply: FastifyReply): undefined | typeof ANSWERED {
  if (verdict === null) return undefined;
  if (verdict.refused) {
    sendRefusal(reply, verdict);
    return ANSWERED;
  }
  // Admitted, or refused by a control in shadow mode: either way the headers tell the real state.
  writeRateLimitHeaders(reply, verdict);
  return undefined;
}

/** The draft-06 triple and the current `RateLimit-Policy`/`RateLimit` pair, for one control. */
export function writeRateLimitHeaders(reply: FastifyReply, { bound, decision }: Verdict): number {
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
