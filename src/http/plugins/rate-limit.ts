// Applies the policy to every request first thing: the route's plan, the caller's key, headers, 429s.
import type { FastifyReply, FastifyRequest } from 'fastify';
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

    /** The check a plan makes as the request arrives: it spends or looks at the caller's budget; null when exempt. */
    const checkFor = (plan: RoutePlan, flow: LoginFlow | null): OnRequestCheck | null => {
      switch (plan.kind) {
        case 'exempt':
          return null;
        case 'login':
          return (request, reply, done) => {
            if (options.mayBeKnownDevice(request)) return done();
            decide(() => flow!.lockedBefore(request.caller, 'ip'), reply, done);
          };
        case 'controls': {
          // Policy routes list one control each; a route with several would consume them in order.
          const { control } = engine.controls[plan.controls[0]!];
          return (request, reply, done) => {
            decide(() => engine.consume(control.name, keyFor(control, request.caller)!), reply, done);
          };
        }
        case 'generic': {
          const authenticated = engine.controls[plan.authenticated].control;
          const unauthenticated = engine.controls[plan.unauthenticated].control;
          return (request, reply, done) => {
            const caller = request.caller;
            const control = caller.userId !== null ? authenticated : unauthenticated;
            decide(() => engine.consume(control.name, keyFor(control, caller)!), reply, done);
          };
        }
      }
    };

    /** The account's lock, looked at once the body names it (a known device is left to the handler). */
    const accountLockCheck =
      (flow: LoginFlow): OnRequestCheck =>
      (request, reply, done) => {
        const email = (request.body as { email?: unknown } | undefined)?.email;
        if (typeof email !== 'string' || options.mayBeKnownDevice(request)) return done();
        decide(() => flow.lockedBefore(request.caller, 'account', email), reply, done);
      };

    // A route's plan is fixed when the route is registered, so each route gets the check made for
    // its plan: nothing per request looks the route up, and an exempt route has no check at all.
    app.addHook('onRoute', (route) => {
      const first = Array.isArray(route.method) ? route.method[0]! : route.method;
      // Fastify adds a HEAD route for every GET: it is the same resource under the same plan.
      const method = first === 'HEAD' ? 'GET' : first;
      const plan = planForRoute(method, route.url ?? route.path);
      let flow: LoginFlow | null = null;
      if (plan.kind === 'login') {
        flow = new LoginFlow({ engine, plan, events: options.events });
        // The login handler spends or gives back what the password check decides.
        route.config = { ...route.config, loginFlow: flow };
        // The account's lock needs the submitted email, so it is looked at once the body is parsed,
        // first among the route's preValidation hooks: before CSRF and field validation, as for
        // every other limiter, a locked account gets its 429.
        route.preValidation = [accountLockCheck(flow), ...hookList(route.preValidation)];
      }
      const check = checkFor(plan, flow);
      // Route hooks run after the app's own onRequest hooks: the session is resolved by then.
      if (check) route.onRequest = [...hookList(route.onRequest), check];
    });

    // A path that matches no route never met onRoute: this hook covers those requests, and only those.
    const unmatchedChecks = new Map<RoutePlan, OnRequestCheck | null>();
    app.addHook('onRequest', (request, reply, done) => {
      if (!request.is404) return done();
      const plan = planForUnmatched(request.url);
      let check = unmatchedChecks.get(plan);
      if (check === undefined) {
        check = checkFor(plan, null);
        unmatchedChecks.set(plan, check);
      }
      if (check === null) return done();
      check(request, reply, done);
    });
  },
  { name: 'rate-limit', dependencies: ['session'] },
);

type OnRequestCheck = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/** Runs a decision; a store that throws at once fails the request as one that rejects does. */
function decide(
  decision: () => Verdict | null | Promise<Verdict | null>,
  reply: FastifyReply,
  done: (error?: Error) => void,
): void {
  let outcome: Verdict | null | Promise<Verdict | null>;
  try {
    outcome = decision();
  } catch (error) {
    done(error as Error);
    return;
  }
  settle(outcome, reply, done);
}

function settle(
  outcome: Verdict | null | Promise<Verdict | null>,
  reply: FastifyReply,
  done: (error?: Error) => void,
): void {
  if (outcome instanceof Promise) {
    // A store failure (closed mode) goes to the error handler, the one place that makes it a 503.
    outcome.then(
      (verdict) => finish(reply, verdict, done),
      (error) => done(error),
    );
  } else {
    finish(reply, outcome, done);
  }
}

function finish(reply: FastifyReply, verdict: Verdict | null, done: (error?: Error) => void): void {
  if (verdict === null) {
    done();
  } else if (verdict.refused) {
    sendRefusal(reply, verdict);
  } else {
    // Admitted, or refused by a control in shadow mode: either way the headers tell the real state.
    writeRateLimitHeaders(reply, verdict);
    done();
  }
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
