// THE rate-limit policy: every control, the routes it covers, its key, its budget and its 429 code.
import type { Config } from '../config.ts';
import type { ErrorCode } from '../errors.ts';
import type { Budget } from './budget.ts';

export type ControlName =
  | 'task-bulk'
  | 'api-authenticated'
  | 'api-unauthenticated'
  | 'login-account'
  | 'login-ip';

export interface Control {
  readonly name: ControlName;
  readonly code: ErrorCode;
  /** What the key is made of: the user id, the client IP (IPv6 by prefix), the submitted email. */
  readonly key: 'user-else-ip' | 'user' | 'ip' | 'account';
  /** What spends the budget: every request on the route, or only failed credential checks. */
  readonly counts: 'every-request' | 'failed-logins';
  readonly budget: (limits: Config['rateLimits']) => Budget;
}

export const CONTROLS: Readonly<Record<ControlName, Control>> = {
  'task-bulk': {
    name: 'task-bulk',
    code: 'TASK_BULK_RATE_LIMIT',
    key: 'user-else-ip',
    counts: 'every-request',
    budget: (l) => l.bulk, // RATE_LIMIT_BULK, default 30/15m
  },
  'api-authenticated': {
    name: 'api-authenticated',
    code: 'API_RATE_LIMIT_AUTHENTICATED',
    key: 'user',
    counts: 'every-request',
    budget: (l) => l.authenticated, // RATE_LIMIT_AUTHENTICATED, default 1000/15m
  },
  'api-unauthenticated': {
    name: 'api-unauthenticated',
    code: 'API_RATE_LIMIT_UNAUTHENTICATED',
    key: 'ip',
    counts: 'every-request',
    budget: (l) => l.unauthenticated, // RATE_LIMIT_UNAUTHENTICATED, default 100/15m
  },
  'login-account': {
    name: 'login-account',
    code: 'LOGIN_RATE_LIMIT',
    key: 'account',
    counts: 'failed-logins',
    budget: (l) => l.loginAccount, // RATE_LIMIT_LOGIN_ACCOUNT, default 10/15m
  },
  'login-ip': {
    name: 'login-ip',
    code: 'LOGIN_RATE_LIMIT',
    key: 'ip',
    counts: 'failed-logins',
    budget: (l) => l.loginIp, // RATE_LIMIT_LOGIN_IP, default 100/15m
  },
};

/**
 * What a route is subject to. Decided once per route when it is registered, never per request
 * from the URL, so the exemptions hold by construction:
 * - `controls`: these controls count every request, and nothing else applies (no generic bucket);
 * - `login`: only the login-failure controls, checked before the password, spent by failures;
 * - `exempt`: no control at all;
 * - `generic`: the generic bucket of the caller's state (per user when signed in, else per IP).
 */
export type RoutePlan =
  | { readonly kind: 'controls'; readonly controls: readonly ControlName[] }
  | { readonly kind: 'login'; readonly controls: readonly ControlName[] }
  | { readonly kind: 'exempt' }
  | { readonly kind: 'generic'; readonly authenticated: ControlName; readonly unauthenticated: ControlName };

export const ROUTE_PLANS: Readonly<Record<string, RoutePlan>> = {
  'PATCH /api/employee/tasks/bulk': { kind: 'controls', controls: ['task-bulk'] },
  'GET /api/csrf-token': { kind: 'exempt' }, // the login entry path never meets generic pressure
  // The address first: a burst from one address is refused before it leaves state for every email.
  'POST /api/auth/login': { kind: 'login', controls: ['login-ip', 'login-account'] },
  'GET /api/rate-limits': { kind: 'exempt' }, // reads the caller's budgets, never spends them
};

/** Every other route under /api, including paths that match no route (404s). */
export const API_DEFAULT_PLAN: RoutePlan = {
  kind: 'generic',
  authenticated: 'api-authenticated',
  unauthenticated: 'api-unauthenticated',
};

/** Outside /api (health, metrics, docs, the portal's static files): no control. */
export const OUTSIDE_API_PLAN: RoutePlan = { kind: 'exempt' };

/** The plan of a registered route, from its method and URL pattern (never the request URL). */
export function planForRoute(method: string, url: string): RoutePlan {
  return ROUTE_PLANS[`${method} ${url}`] ?? (isApiPath(url) ? API_DEFAULT_PLAN : OUTSIDE_API_PLAN);
}

/** The plan of a request that matched no route: an /api 404 still spends the generic bucket. */
export function planForUnmatched(path: string): RoutePlan {
  return isApiPath(path) ? API_DEFAULT_PLAN : OUTSIDE_API_PLAN;
}

function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/') || path.startsWith('/api?');
}
