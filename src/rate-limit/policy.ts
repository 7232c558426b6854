// THE rate-limit policy: every control, who it applies to, its key, its budget, its mode and its 429 code.
import type { ErrorCode } from '../errors.ts';
import { type Budget, windowSeconds } from './budget.ts';
import { CONTROL_NAMES, type ControlName } from './control-names.ts';
import type { RateRule } from './stores/store.ts';

export { CONTROL_NAMES, type ControlName };

/** `enforce` refuses past the budget; `shadow` decides and counts the same, but lets the request go on. */
export type ControlMode = 'enforce' | 'shadow';

/** Who is asking, as the policy keys it. A part the caller lacks is null. */
export interface Caller {
  readonly userId: number | null;
  /** The account in its normal form (src/email.ts): the signed-in user's, or the one a login names. */
  readonly account: string | null;
  /** The device id of a valid device cookie (src/auth/devices.ts) the caller presents, known to the server. */
  readonly deviceId: string | null;
  /** The client address key (IPv6 by prefix), worked out only when a control needs it. */
  ipKey(): string;
  /**
   * Whether the client address is in RATE_LIMIT_TRUSTED_NETWORKS (an office behind one NAT
   * address): then the controls keyed by the address alone do not apply (`keyFor`).
   */
  inTrustedNetwork(): boolean;
}

export interface Control {
  readonly name: ControlName;
  readonly code: ErrorCode;
  /**
   * What the key is made of: the user id, the client IP (IPv6 by prefix), the account's email, the
   * device id. `ip` is a per-address control: a caller in a trusted network has no key under it, so
   * it does not apply to them (docs/rules.md#rate-limits); every other key holds for everyone.
   */
  readonly key: 'user-else-ip' | 'user' | 'ip' | 'account' | 'device';
  /** What spends the budget: every request on the route, or only failed credential checks. */
  readonly counts: 'every-request' | 'failed-logins';
  /** Whose budgets GET /api/rate-limits reports it for. */
  readonly reportedFor: 'everyone' | 'signed-in' | 'signed-out' | 'known-device';
  readonly budget: (limits: PolicyLimits) => Budget;
}

/** What the policy is bound with: a budget per control (from the RATE_LIMIT_* variables) and the shadow list. */
export interface PolicyLimits {
  readonly bulk: Budget;
  readonly taskImport: Budget;
  readonly authenticated: Budget;
  readonly unauthenticated: Budget;
  readonly loginAccount: Budget;
  readonly loginIp: Budget;
  readonly loginDevice: Budget;
  readonly passkeyOptions: Budget;
  /** The controls in shadow mode (RATE_LIMIT_SHADOW): they decide and count, but never refuse. */
  readonly shadow: readonly ControlName[];
}

export const CONTROLS: Readonly<Record<ControlName, Control>> = {
  'task-bulk': {
    name: 'task-bulk',
    code: 'TASK_BULK_RATE_LIMIT',
    key: 'user-else-ip',
    counts: 'every-request',
    reportedFor: 'everyone',
    budget: (l) => l.bulk, // RATE_LIMIT_BULK, default 30/15m
  },
  // An import writes up to 100,000 tasks: a budget of its own, per user (docs/rules.md#export-and-import).
  'task-import': {
    name: 'task-import',
    code: 'TASK_IMPORT_RATE_LIMIT',
    key: 'user',
    counts: 'every-request',
    reportedFor: 'signed-in',
    budget: (l) => l.taskImport, // RATE_LIMIT_TASK_IMPORT, default 10/1h
  },
  'api-authenticated': {
    name: 'api-authenticated',
    code: 'API_RATE_LIMIT_AUTHENTICATED',
    key: 'user',
    counts: 'every-request',
    reportedFor: 'signed-in',
    budget: (l) => l.authenticated, // RATE_LIMIT_AUTHENTICATED, default 1000/15m
  },
  'api-unauthenticated': {
    name: 'api-unauthenticated',
    code: 'API_RATE_LIMIT_UNAUTHENTICATED',
    key: 'ip',
    counts: 'every-request',
    reportedFor: 'signed-out',
    budget: (l) => l.unauthenticated, // RATE_LIMIT_UNAUTHENTICATED, default 100/15m
  },
  'login-account': {
    name: 'login-account',
    code: 'LOGIN_RATE_LIMIT',
    key: 'account',
    counts: 'failed-logins',
    reportedFor: 'signed-in', // the signed-out caller has no account yet
    budget: (l) => l.loginAccount, // RATE_LIMIT_LOGIN_ACCOUNT, default 10/15m
  },
  'login-ip': {
    name: 'login-ip',
    code: 'LOGIN_RATE_LIMIT',
    key: 'ip',
    counts: 'failed-logins',
    reportedFor: 'everyone',
    budget: (l) => l.loginIp, // RATE_LIMIT_LOGIN_IP, default 100/15m
  },
  // docs/rules.md#known-devices: a login from a known device is counted here alone, never by account or address.
  'login-device': {
    name: 'login-device',
    code: 'LOGIN_RATE_LIMIT',
    key: 'device',
    counts: 'failed-logins',
    reportedFor: 'known-device',
    budget: (l) => l.loginDevice, // RATE_LIMIT_LOGIN_DEVICE, default 10/15m
  },
  // Each passkey sign-in's options keep a challenge: a budget per address, so no one address fills
  // the store of challenges (docs/rules.md#passkeys). Its 429 is the login's.
  'passkey-options': {
    name: 'passkey-options',
    code: 'LOGIN_RATE_LIMIT',
    key: 'ip',
    counts: 'every-request',
    reportedFor: 'everyone',
    budget: (l) => l.passkeyOptions, // RATE_LIMIT_PASSKEY_OPTIONS, default 30/1m
  },
};

/** A control with its budget and mode bound from the config, and its constant header values made once. */
export interface BoundControl {
  readonly control: Control;
  /** RATE_LIMIT_SHADOW names the controls in `shadow`; every other one is `enforce`. */
  readonly mode: ControlMode;
  readonly rule: RateRule;
  readonly limitHeader: string;
  readonly policyHeader: string;
  readonly windowSeconds: number;
}

export type BoundPolicy = Readonly<Record<ControlName, BoundControl>>;

/** The policy table with the config's budgets and modes: made once per app. */
export function bindPolicy(limits: PolicyLimits): BoundPolicy {
  const bound = {} as Record<ControlName, BoundControl>;
  for (const control of Object.values(CONTROLS)) {
    const budget = control.budget(limits);
    const seconds = windowSeconds(budget);
    bound[control.name] = Object.freeze({
      control,
      mode: limits.shadow.includes(control.name) ? 'shadow' : 'enforce',
      rule: Object.freeze({ name: control.name, limit: budget.limit, windowMs: budget.windowMs }),
      limitHeader: String(budget.limit),
      policyHeader: `"${control.name}";q=${budget.limit};w=${seconds}`,
      windowSeconds: seconds,
    });
  }
  return Object.freeze(bound);
}

/** The caller's key under a control, or null when the caller has no such key (no account, say). */
export function keyFor(control: Control, caller: Caller): string | null {
  switch (control.key) {
    case 'user':
      return caller.userId === null ? null : String(caller.userId);
    case 'user-else-ip':
      return caller.userId !== null ? `u${caller.userId}` : `ip${caller.ipKey()}`;
    case 'ip':
      // Per address alone: a trusted network's callers share one address, so they skip it.
      return caller.inTrustedNetwork() ? null : caller.ipKey();
    case 'account':
      return caller.account;
    case 'device':
      return caller.deviceId;
  }
}

/** The same caller, keyed under other parts: the account a login names, the device it presents. */
export function callerWith(
  caller: Caller,
  parts: { readonly account?: string | null; readonly deviceId?: string | null },
): Caller {
  return {
    userId: parts.account === undefined ? caller.userId : null,
    account: parts.account === undefined ? caller.account : parts.account,
    deviceId: parts.deviceId === undefined ? caller.deviceId : parts.deviceId,
    ipKey: () => caller.ipKey(),
    inTrustedNetwork: () => caller.inTrustedNetwork(),
  };
}

/** The controls GET /api/rate-limits reports for this caller, each with the caller's key, in table order. */
export function controlsFor(caller: Caller): { name: ControlName; key: string }[] {
  const signedIn = caller.userId !== null;
  const applies: { name: ControlName; key: string }[] = [];
  for (const name of CONTROL_NAMES) {
    const control = CONTROLS[name];
    if (control.reportedFor === 'signed-in' && !signedIn) continue;
    if (control.reportedFor === 'signed-out' && signedIn) continue;
    if (control.reportedFor === 'known-device' && caller.deviceId === null) continue;
    const key = keyFor(control, caller);
    if (key !== null) applies.push({ name, key });
  }
  return applies;
}

/**
 * What a route is subject to. Decided once per route when it is registered, never per request
 * from the URL, so the exemptions hold by construction:
 * - `controls`: these controls count every request, and nothing else applies (no generic bucket);
 *   with `repeats: { free: n }`, the first `n` repeats of a key are shown the budget without
 *   spending it, and the later ones spend it as a new request does. A repeat is a request naming an
 *   Idempotency-Key that another request of the same caller holds, in flight or answered
 *   (docs/rules.md#idempotent-bulk-reassignment): that request was charged, and the repeat can
 *   change nothing (it is answered the stored answer, 409 or 422), so a retry is not charged
 *   twice; past `n`, repeats would be database work nothing pays for;
 * - `login`: only the login-failure controls, checked before the password, spent by failures:
 *   `knownDevice` for an attempt with a valid device cookie for the submitted account, else
 *   `unknownDevice`, each in the order checked; `failuresAlsoCount`: controls a failure is counted
 *   against too, which never refuse an attempt of this route. The login routes apply it
 *   themselves, through the login layer (src/login/), since what spends it is the credential
 *   check's outcome;
 * - `exempt`: no control at all;
 * - `generic`: the generic bucket of the caller's state (per user when signed in, else per IP).
 */
export type RoutePlan =
  | {
      readonly kind: 'controls';
      readonly controls: readonly ControlName[];
      readonly repeats?: { readonly free: number };
    }
  | {
      readonly kind: 'login';
      readonly unknownDevice: readonly ControlName[];
      readonly knownDevice: readonly ControlName[];
      readonly failuresAlsoCount?: readonly ControlName[];
    }
  | { readonly kind: 'exempt' }
  | {
      readonly kind: 'generic';
      readonly authenticated: ControlName;
      readonly unauthenticated: ControlName;
      /**
       * A route that also checks a password besides (the password change): its failures count
       * under these controls as a failed login's would, before the check and after it (the route
       * runs them with a LoginFlow of this plan).
       */
      readonly passwordFailures?: {
        readonly unknownDevice: readonly ControlName[];
        readonly knownDevice: readonly ControlName[];
      };
    };

/**
 * The free repeats of one Idempotency-Key of a bulk reassignment: far more than a client's retries
 * (the typed client's two, the page's few), far fewer than a loop of replays would need to keep
 * the database busy.
 */
export const BULK_FREE_REPEATS = 10;

export const ROUTE_PLANS: Readonly<Record<string, RoutePlan>> = {
  'PATCH /api/employee/tasks/bulk': {
    kind: 'controls',
    controls: ['task-bulk'],
    repeats: { free: BULK_FREE_REPEATS },
  },
  'POST /api/employee/tasks/import': {
    kind: 'controls',
    controls: ['task-import'],
    repeats: { free: BULK_FREE_REPEATS },
  },
  'GET /api/csrf-token': { kind: 'exempt' }, // the login entry path never meets generic pressure
  // The address first: a burst from one address is refused before it leaves state for every email.
  'POST /api/auth/login': {
    kind: 'login',
    unknownDevice: ['login-ip', 'login-account'],
    knownDevice: ['login-device'],
  },
  'GET /api/rate-limits': { kind: 'exempt' }, // reads the caller's budgets, never spends them
  'POST /api/auth/passkey/options': { kind: 'controls', controls: ['passkey-options'] },
  // A passkey sign-in is on the login entry path (docs/rules.md#passkeys). Its failures count like
  // a wrong password's, by address and, when the credential names one, against the account's
  // password sign-ins; but only the address refuses it: a passkey cannot be guessed, so others'
  // wrong passwords must not lock it. A device cookie changes nothing: there is no password to guess.
  // Accounts (docs/rules.md#accounts): changing a password re-checks the current one, so a wrong one
  // is a failed login of the account and the address, and a locked one is refused before the check.
  // A device cookie changes nothing: the caller is signed in already, and the check is a guess all the same.
  'POST /api/auth/password': {
    kind: 'generic',
    authenticated: 'api-authenticated',
    unauthenticated: 'api-unauthenticated',
    passwordFailures: { unknownDevice: ['login-ip', 'login-account'], knownDevice: [] },
  },
  'POST /api/auth/passkey/login': {
    kind: 'login',
    unknownDevice: ['login-ip'],
    knownDevice: [],
    failuresAlsoCount: ['login-account'],
  },
};

/** A plan of the login-failure controls, which the login layer applies itself (src/login/login-flow.ts). */
export type LoginPlan = Extract<RoutePlan, { readonly kind: 'login' }>;

function loginPlanOf(route: string): LoginPlan {
  const plan = ROUTE_PLANS[route];
  if (plan?.kind !== 'login') throw new Error(`${route} has no login plan`);
  return plan;
}

/** The plans of the two sign-ins, as the table above gives them to their routes. */
export const LOGIN_PLANS: { readonly password: LoginPlan; readonly passkey: LoginPlan } = {
  password: loginPlanOf('POST /api/auth/login'),
  passkey: loginPlanOf('POST /api/auth/passkey/login'),
};

/**
 * The failure controls of the password change's current-password check (docs/rules.md#accounts):
 * the route's generic plan carries them, the login layer applies them.
 */
export const PASSWORD_CHANGE_FAILURES: NonNullable<
  Extract<RoutePlan, { readonly kind: 'generic' }>['passwordFailures']
> = (() => {
  const plan = ROUTE_PLANS['POST /api/auth/password'];
  if (plan?.kind !== 'generic' || !plan.passwordFailures)
    throw new Error('the password change has no failure plan');
  return plan.passwordFailures;
})();

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
