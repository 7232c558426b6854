// What every request goes through before its handler, as one onRequest hook made for each route.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { hookList } from './hook-list.ts';

/** What a step tells the pipeline: go on now, go on once the promise settles, or stop (it answered). */
export const ANSWERED = Symbol('request-pipeline.answered');
export type StepResult = undefined | typeof ANSWERED | Promise<undefined | typeof ANSWERED>;

/** One concern's work on a request (security headers, session, rate limit, access). It may throw. */
export type RequestStep = (request: FastifyRequest, reply: FastifyReply) => StepResult;

/** The route a step is made for: its method(s), URL pattern and config; null for a request that matched no route. */
export type StepRoute = Pick<RouteOptions, 'method' | 'url' | 'config'> | null;

/** Makes a concern's step for one route when the route is registered; null when the route needs none. */
export type StepFactory = (route: StepRoute) => RequestStep | null;

type Done = (error?: Error) => void;
type OnRequest = (request: FastifyRequest, reply: FastifyReply, done: Done) => void;

declare module 'fastify' {
  interface FastifyInstance {
    /** Where the plugins that act on every request add their step (in the order they are registered). */
    requestPipeline: RequestPipeline;
  }
  interface FastifyRequest {
    /** The URL pattern of the route that answers this request (set by its pipeline); null when none matched (a 404). */
    routePattern: string | null;
  }
}

export class RequestPipeline {
  private readonly factories: StepFactory[] = [];
  private started = false;

  /** Adds a concern's step after those added before it. */
  add(factory: StepFactory): void {
    if (this.started) throw new Error('request pipeline: a step was added after requests were served');
    this.factories.push(factory);
  }

  /**
   * The hook of one registered route. Its steps are made at its first request: by then every
   * plugin has added its step and made its own changes to the route (its config, its hooks).
   */
  forRoute(route: RouteOptions): OnRequest {
    const pattern = route.url;
    let steps: RequestStep[] | null = null;
    return (request, reply, done) => {
      request.routePattern = pattern;
      steps ??= this.stepsFor(route);
      run(steps, 0, request, reply, done);
    };
  }

  /** The hook of requests that matched no route (the 404 handler's). */
  forUnmatched(): OnRequest {
    let steps: RequestStep[] | null = null;
    return (request, reply, done) => {
      steps ??= this.stepsFor(null);
      run(steps, 0, request, reply, done);
    };
  }

  private stepsFor(route: StepRoute): RequestStep[] {
    this.started = true;
    const steps: RequestStep[] = [];
    for (const factory of this.factories) {
      const step = factory(route);
      if (step) steps.push(step);
    }
    return steps;
  }
}

/**
 * Runs the steps from `index` on. Why not one Fastify hook per concern: each hook Fastify runs
 * costs a turn of its hook runner, and each hook phase three closures, on every request; here a
 * request pays one hook, and a closure only when a step has to wait (a session load, a Redis
 * decision).
 */
function run(
  steps: readonly RequestStep[],
  index: number,
  request: FastifyRequest,
  reply: FastifyReply,
  done: Done,
) {
  for (let i = index; i < steps.length; i++) {
    let result: StepResult;
    try {
      result = steps[i]!(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (result === undefined) continue;
    if (result === ANSWERED) return;
    const next = i + 1;
    result.then((settled) => {
      if (settled !== ANSWERED) run(steps, next, request, reply, done);
    }, done);
    return;
  }
  done();
}

/** One step as a Fastify hook of its own, for work that must wait for a later phase (a parsed body). */
export function asHook(step: RequestStep): OnRequest {
  const steps = [step];
  return (request, reply, done) => run(steps, 0, request, reply, done);
}

/**
 * Gives every route its pipeline hook, first among its onRequest hooks. Register it before the
 * plugins that add steps; the 404 handler's context takes `forUnmatched()` (error-handler.ts).
 */
export const requestPipelinePlugin = fp(
  async (app: FastifyInstance) => {
    const pipeline = new RequestPipeline();
    app.decorate('requestPipeline', pipeline);
    app.decorateRequest('routePattern', null);
    app.addHook('onRoute', (route) => {
      route.onRequest = [pipeline.forRoute(route), ...hookList(route.onRequest)];
    });
  },
  { name: 'request-pipeline' },
);
