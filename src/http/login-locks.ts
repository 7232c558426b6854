// A sign-in route's own hooks: the address's lock before the body, the account's once the body names it.
import type {
  FastifyError,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RouteShorthandOptions,
} from 'fastify';
import { DEVICE_COOKIE } from '../auth/devices.ts';
import type { LoginFlow } from '../login/login-flow.ts';
import type { Verdict } from '../rate-limit/engine.ts';
import { sendRefusal } from './plugins/rate-limit.ts';

/**
 * The hooks a sign-in route declares from its failure flow (docs/architecture.md, "A request's way
 * through the hooks", steps 5 and 7). They look at the login-failure budgets without spending;
 * only the attempt, after the credential check, spends them.
 * - `onRequest`, after the app's (security headers, cookies, session): the address's lock. A
 *   refusal is kept, not answered, and nothing but the body's reading runs before it is.
 * - `preValidation`, the route's first (before CSRF's and field validation): the account's lock,
 *   now that the body names it; the 429 is whichever of the two refusals ends last.
 * - `errorHandler`: a body that fails (too large, not JSON) gets the address's 429 in place of its
 *   own error, since the rate limiter answers first; any other error goes on to the app's handler.
 */
export function loginLockHooks(
  flow: LoginFlow,
): Required<Pick<RouteShorthandOptions, 'onRequest' | 'preValidation' | 'errorHandler'>> {
  const addressRefusals = new WeakMap<FastifyRequest, Verdict>();
  return {
    onRequest(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
      const keep = (verdict: Verdict | null) => {
        if (verdict) addressRefusals.set(request, verdict);
        done();
      };
      const look = flow.beforeBody(request.caller, request.cookies[DEVICE_COOKIE]);
      if (look instanceof Promise) look.then(keep, done);
      else keep(look);
    },
    preValidation(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
      const answer = (verdict: Verdict | null) => {
        // Refused: answered here, and the hooks after this one (CSRF, access, validation) never run.
        if (verdict) sendRefusal(reply, verdict);
        else done();
      };
      const email = (request.body as { email?: unknown } | undefined)?.email;
      const address = addressRefusals.get(request) ?? null;
      const look = flow.afterBody(request.caller, email, request.cookies[DEVICE_COOKIE], address);
      if (look instanceof Promise) look.then(answer, done);
      else answer(look);
    },
    errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
      const address = addressRefusals.get(request);
      if (!address) throw error;
      sendRefusal(reply, address);
    },
  };
}
