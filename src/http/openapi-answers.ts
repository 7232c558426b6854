// What the OpenAPI document says a route answers, from its rate-limit plan, its access and its schemas.
import { STATUS_CODES } from 'node:http';
import type { FastifySchema, RouteOptions } from 'fastify';
import { PASSWORD_REFUSALS } from '../auth/password-rules.ts';
import { ERRORS, type ErrorCode, IMPORT_ROW_CODES } from '../errors.ts';
import { BULK_MAX_TASKS, IDEMPOTENCY_KEY_MAX_LENGTH, PASSKEYS_MAX } from '../limits.ts';
import {
  BULK_FREE_REPEATS,
  CONTROLS,
  type ControlName,
  planForRoute,
  type RoutePlan,
} from '../rate-limit/policy.ts';
import type { Access } from './plugins/authorization.ts';
import { CSRF_COOKIE, CSRF_HEADER } from './plugins/csrf.ts';
import { IDEMPOTENCY_KEY_HEADER, IN_FLIGHT_RETRY_AFTER, REPLAYED_HEADER } from './plugins/idempotency.ts';
import { workAskedSchema } from './proved-work-schemas.ts';
import { ref } from './schemas.ts';
import { SESSION_COOKIE } from './session-cookie.ts';

/** The security schemes of components.securitySchemes: the cookies and the header a caller sends. */
export const SECURITY_SCHEMES = {
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'The session, set by POST /api/auth/login (HttpOnly, SameSite=Lax) and ended by logout.',
  },
  csrfToken: {
    type: 'apiKey',
    in: 'header',
    name: CSRF_HEADER,
    description:
      'Every unsafe request (POST, PUT, PATCH, DELETE) under /api, the login included, sends the token of ' +
      'GET /api/csrf-token here. It is bound to the session once signed in (the login answers the new one), ' +
      `and before that to the ${CSRF_COOKIE} cookie that GET /api/csrf-token sets.`,
  },
  csrfCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: CSRF_COOKIE,
    description:
      'The pre-session cookie behind a token obtained before signing in (set by GET /api/csrf-token).',
  },
} as const;

type SchemeName = keyof typeof SECURITY_SCHEMES;
type SecurityRequirement = Partial<Record<SchemeName, []>>;

/** Unsafe methods: each one needs the CSRF header under /api. */
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A header a response documents: its schema, and whether every such response carries it. */
interface HeaderSpec {
  readonly schema: Record<string, unknown>;
  readonly description: string;
  readonly required: boolean;
}

/**
 * A response header as @fastify/swagger reads it from a response schema's `headers`: the schema
 * with its description; `required: true` is lifted onto the header object by `liftRequiredHeaders`.
 */
function header({ schema, description, required }: HeaderSpec): Record<string, unknown> {
  return { ...schema, description, ...(required ? { required: true } : {}) };
}

const seconds = { type: 'integer', minimum: 0 } as const;

/** The draft-06 triple and the structured pair (docs/rules.md#rate-limits), their policy names those of `controls`. */
function rateLimitHeaders(controls: readonly ControlName[], required: boolean) {
  const names = `(${controls.join('|')})`;
  return {
    'RateLimit-Limit': header({
      schema: { type: 'integer', minimum: 1 },
      description: 'The budget of the control that applied (requests per window).',
      required,
    }),
    'RateLimit-Remaining': header({
      schema: seconds,
      description: 'How many more requests it would admit now.',
      required,
    }),
    'RateLimit-Reset': header({
      schema: seconds,
      description: 'Seconds until it admits a request again (0 when it would now).',
      required,
    }),
    'RateLimit-Policy': header({
      schema: { type: 'string', pattern: `^"${names}";q=[0-9]+;w=[0-9]+$` },
      description: 'The control that applied, its budget (q) and its window in seconds (w).',
      required,
    }),
    RateLimit: header({
      schema: { type: 'string', pattern: `^"${names}";r=[0-9]+;t=[0-9]+$` },
      description: 'The same control, what remains (r) and the seconds until it admits again (t).',
      required,
    }),
  };
}

const RETRY_AFTER = header({
  schema: { type: 'integer', minimum: 1 },
  description: 'Seconds to wait before trying again (429 and 503).',
  required: true,
});

const NO_STORE = header({
  schema: { type: 'string', enum: ['no-store'] },
  description: 'No answer of the API is stored by caches.',
  required: true,
});

/** Details some codes add to `{code, message}`; every other code sends those two alone. */
const DETAILS: Partial<Record<ErrorCode, { properties: Record<string, unknown>; required: string[] }>> = {
  VALIDATION_ERROR: {
    properties: {
      errors: {
        type: 'array',
        description: 'Each field that failed, and why.',
        items: {
          type: 'object',
          required: ['path', 'message'],
          additionalProperties: false,
          properties: { path: { type: 'string' }, message: { type: 'string' } },
        },
      },
    },
    required: [],
  },
  LOGIN_BUSY: { properties: { work: workAskedSchema }, required: [] },
  TASK_BULK_TOO_LARGE: {
    properties: {
      max: { type: 'integer', enum: [BULK_MAX_TASKS], description: 'The most a request may name.' },
    },
    required: ['max'],
  },
  PASSWORD_REFUSED: {
    properties: {
      reason: {
        type: 'string',
        enum: PASSWORD_REFUSALS,
        description:
          'Why: too short or too long, the email in it, a common password, one easy to guess (the message says why), ' +
          'one a breach lists, or (a change of your own) the current password or a temporary one kept in the new.',
      },
    },
    required: ['reason'],
  },
  IDEMPOTENCY_KEY_IN_FLIGHT: {
    properties: {
      retryAfter: {
        type: 'integer',
        enum: [IN_FLIGHT_RETRY_AFTER],
        description: 'Seconds to wait before sending the same request with the same key again.',
      },
    },
    required: ['retryAfter'],
  },
  TASK_CHANGED: {
    properties: {
      task: { ...ref('Task'), description: 'The task as it is now: show what changed, then try again.' },
    },
    required: ['task'],
  },
  IMPORT_INVALID: {
    properties: {
      errors: {
        type: 'array',
        maxItems: 100,
        description: 'The first 100 wrong cells, in file order; nothing was created.',
        items: {
          type: 'object',
          required: ['line', 'column', 'code', 'message'],
          additionalProperties: false,
          properties: {
            line: {
              type: 'integer',
              minimum: 2,
              description: 'The row as a spreadsheet numbers it: the header is 1.',
            },
            column: { type: 'string', description: "The column's header name." },
            code: { type: 'string', enum: IMPORT_ROW_CODES },
            message: { type: 'string' },
          },
        },
      },
    },
    required: ['errors'],
  },
  PASSKEY_LIMIT: {
    properties: {
      max: { type: 'integer', enum: [PASSKEYS_MAX], description: 'The most passkeys an account may hold.' },
    },
    required: ['max'],
  },
};

/** Statuses whose answers say how long to wait, in the body as in `Retry-After`. */
const WAIT_STATUSES = new Set([429, 503]);

/**
 * The error body of one status: the shared `Error` with `code` narrowed to what the route can
 * answer there, and each code's details (codes sharing details in one branch of a `oneOf`).
 */
export function errorBodySchema(status: number, codes: readonly ErrorCode[]): Record<string, unknown> {
  const groups = new Map<string, ErrorCode[]>();
  for (const code of [...codes].sort()) {
    const key = JSON.stringify(DETAILS[code] ?? null);
    groups.set(key, [...(groups.get(key) ?? []), code]);
  }
  const waits = WAIT_STATUSES.has(status);
  const branches = [...groups.values()].map((group) => {
    const details = DETAILS[group[0]!];
    return {
      type: 'object',
      required: ['code', 'message', ...(waits ? ['retryAfter'] : []), ...(details?.required ?? [])],
      additionalProperties: false,
      properties: {
        code: { type: 'string', enum: group },
        message: { type: 'string' },
        ...(waits ? { retryAfter: { type: 'integer', minimum: 1, description: 'Seconds to wait.' } } : {}),
        ...details?.properties,
      },
    };
  });
  return { allOf: [ref('Error'), branches.length === 1 ? branches[0] : { oneOf: branches }] };
}

/** The route's codes of its own (a missing task, a wrong password), read from its response schemas. */
function declaredCodes(response: Record<string, unknown>): ErrorCode[] {
  const codes: ErrorCode[] = [];
  for (const [status, schema] of Object.entries(response)) {
    if (Number(status) < 400) continue;
    const listed = (schema as { properties?: { code?: { enum?: ErrorCode[] } } }).properties?.code?.enum;
    // A status declared without codes stands for every code of that status.
    codes.push(...(listed ?? codesOfStatus(Number(status))));
  }
  return codes;
}

function codesOfStatus(status: number): ErrorCode[] {
  return (Object.keys(ERRORS) as ErrorCode[]).filter((code) => ERRORS[code].status === status);
}

/** The controls a plan may answer with, in their headers and 429s. */
function controlsOf(plan: RoutePlan): readonly ControlName[] {
  switch (plan.kind) {
    case 'exempt':
      return [];
    case 'controls':
      return plan.controls;
    case 'login':
      return [...new Set([...plan.unknownDevice, ...plan.knownDevice])];
    case 'generic':
      return [plan.authenticated, plan.unauthenticated, ...(plan.passwordFailures?.unknownDevice ?? [])];
  }
}

/** What a route's answers depend on: its method and URL pattern, who may call it, its schemas. */
export interface RouteShape {
  readonly method: string;
  readonly url: string;
  readonly access: Access;
  /** Whether it takes an Idempotency-Key (plugins/idempotency.ts). */
  readonly idempotencyKey: boolean;
  readonly schema: FastifySchema;
}

export function routeShape(route: Pick<RouteOptions, 'method' | 'url' | 'config' | 'schema'>): RouteShape {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const method = methods.find((m) => m !== 'HEAD') ?? 'GET';
  const config = route.config as { access?: Access; idempotencyKey?: boolean | object } | undefined;
  return {
    method,
    url: route.url,
    access: config?.access ?? 'public',
    idempotencyKey: Boolean(config?.idempotencyKey),
    schema: route.schema ?? {},
  };
}

/** The request header of a route that takes an Idempotency-Key, as a headers schema (documentation only). */
const IDEMPOTENCY_KEY_PARAMETER = {
  type: 'object',
  properties: {
    [IDEMPOTENCY_KEY_HEADER]: {
      type: 'string',
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      pattern: '^[\\x20-\\x7E]+$',
      description:
        `1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters (a new UUID per operation), kept by the ` +
        "client for its retries: the route's success (a bulk reassignment's 200, a create's 201 with its " +
        'Location and ETag) is stored for IDEMPOTENCY_TTL (24 h) and replayed to the same ' +
        'caller for the same body with Idempotent-Replayed: true, changing nothing; another body ' +
        'under the key is 422 IDEMPOTENCY_KEY_REUSED; while the first request is in flight, 409 ' +
        `IDEMPOTENCY_KEY_IN_FLIGHT with Retry-After: 1. On the bulk and import routes the first ${BULK_FREE_REPEATS} repeats of a key ` +
        'spend no budget and later ones spend it as a new request does (429 when none is left); elsewhere every repeat is counted by the generic bucket. Other ' +
        'answers are not stored: the key may be sent again. Not valid: 400 IDEMPOTENCY_KEY_INVALID.',
    },
  },
} as const;

/** The headers only a route that takes a key answers with: the replay's mark, the in-flight wait. */
function idempotencyHeaders(status: number): Record<string, unknown> {
  if (status === 200 || status === 201)
    return {
      [REPLAYED_HEADER]: header({
        schema: { type: 'string', enum: ['true'] },
        description:
          'The stored answer of an earlier request with the same Idempotency-Key: nothing was changed now.',
        required: false,
      }),
    };
  if (status === 409)
    return {
      'Retry-After': header({
        schema: { type: 'integer', enum: [IN_FLIGHT_RETRY_AFTER] },
        description: 'Seconds to wait before sending the same request with the same key again.',
        required: true,
      }),
    };
  return {};
}

/**
 * Every code the route can answer: its rate-limit plan's 429s and the store's 503 (closed mode),
 * the database's 503, the body's 400/413/415, CSRF's 403, access's 401/403, validation's 400, a
 * failure of ours (500), then its own.
 */
export function routeCodes(shape: RouteShape, plan: RoutePlan): ErrorCode[] {
  // Any route may fail on our side; the answer then shows nothing of it (error-handler.ts). Every
  // route needs the database: a session cookie is resolved there before any route runs (session.ts),
  // so with the database away any of them answers 503 DATABASE_UNAVAILABLE (docs/rules.md#faults).
  const codes = new Set<ErrorCode>(['INTERNAL_ERROR', 'DATABASE_UNAVAILABLE']);
  for (const control of controlsOf(plan)) codes.add(CONTROLS[control].code);
  if (plan.kind !== 'exempt') codes.add('RATE_LIMIT_STORE_UNAVAILABLE');
  const unsafe = UNSAFE.has(shape.method);
  if (unsafe) {
    for (const code of ['INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const)
      codes.add(code);
    // A Content-Length that does not match the body.
    codes.add('VALIDATION_ERROR');
    if (isApi(shape.url)) codes.add('CSRF_INVALID');
  }
  if (signedIn(shape.access)) codes.add('UNAUTHENTICATED');
  // A session whose temporary password is still to change reaches only `signed-in` and `anyone` routes.
  if (shape.access === 'user' || shape.access === 'admin' || (shape.access === 'public' && isApi(shape.url)))
    codes.add('PASSWORD_CHANGE_REQUIRED');
  if (shape.access === 'admin') codes.add('FORBIDDEN');
  const { body, querystring, params } = shape.schema as Record<string, unknown>;
  if (body || querystring || params) codes.add('VALIDATION_ERROR');
  if (shape.idempotencyKey)
    for (const code of [
      'IDEMPOTENCY_KEY_INVALID',
      'IDEMPOTENCY_KEY_IN_FLIGHT',
      'IDEMPOTENCY_KEY_REUSED',
    ] as const)
      codes.add(code);
  for (const code of declaredCodes((shape.schema.response ?? {}) as Record<string, unknown>)) codes.add(code);
  return [...codes];
}

/** Who a route asks to prove what: the session cookie, the CSRF header and the cookie behind it. */
export function routeSecurity(shape: RouteShape): SecurityRequirement[] {
  const csrf = UNSAFE.has(shape.method) && isApi(shape.url);
  if (signedIn(shape.access)) return [csrf ? { session: [], csrfToken: [] } : { session: [] }];
  // Signed out, the token is bound to the pre-session cookie (the login itself needs no session).
  if (csrf) return [{ csrfToken: [], csrfCookie: [] }];
  // Anyone; a session, when there is one, changes what the answer is about.
  return [{}, { session: [] }];
}

/**
 * The schema of a route as the OpenAPI document shows it: its own schemas, every error status
 * with the codes it can answer, the headers of every response, and its security. Documentation
 * only: the route keeps its own schemas for validation and serialisation.
 */
export function documentedSchema(
  route: Pick<RouteOptions, 'method' | 'url' | 'config' | 'schema'>,
): FastifySchema {
  const shape = routeShape(route);
  if (!isApi(shape.url)) return shape.schema;
  const plan = planForRoute(shape.method, shape.url);
  const controls = controlsOf(plan);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeCodes(shape, plan)) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }

  const declared = (shape.schema.response ?? {}) as Record<string, Record<string, unknown>>;
  const response: Record<string, Record<string, unknown>> = {};
  const statuses = [...new Set([...Object.keys(declared).map(Number), ...byStatus.keys()])].sort(
    (a, b) => a - b,
  );
  for (const status of statuses) {
    const own = declared[status];
    const isError = status >= 400;
    const body = isError ? errorBodySchema(status, byStatus.get(status) ?? []) : { ...own };
    const ownHeaders = (own?.headers ?? {}) as Record<string, unknown>;
    // The login's answers carry the headers of a login control only when it refuses (docs/rules.md#rate-limits).
    const limited = controls.length > 0 && (plan.kind !== 'login' || status === 429);
    const { description, ...schema } = body as { description?: string };
    response[status] = {
      ...schema,
      // @fastify/swagger's key for a response's description (kept out of the body's schema).
      'x-response-description': description ?? describeStatus(status),
      headers: {
        'Cache-Control': NO_STORE,
        ...(limited ? rateLimitHeaders(controls, status === 429) : {}),
        ...(WAIT_STATUSES.has(status) ? { 'Retry-After': RETRY_AFTER } : {}),
        ...(shape.idempotencyKey ? idempotencyHeaders(status) : {}),
        ...ownHeaders,
      },
    };
  }
  const headers = shape.idempotencyKey ? { headers: IDEMPOTENCY_KEY_PARAMETER } : {};
  return { ...shape.schema, ...headers, response, security: routeSecurity(shape) } as FastifySchema;
}

/** The Set-Cookie a response sends, documented by the route that sends it. */
export function setCookieHeader(description: string, required: boolean): Record<string, unknown> {
  return header({ schema: { type: 'string' }, description, required });
}

const STATUS_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'The request is malformed or a field is not valid.',
  401: 'No valid session, or wrong credentials.',
  403: 'The CSRF token is missing or invalid, or the role does not allow this.',
  404: 'No such resource.',
  413: 'The body is too large.',
  415: 'The body is not JSON.',
  409: 'Another request with the same Idempotency-Key is still in flight, or the name is taken.',
  412: "If-Match does not name the task's current version: nothing was saved; the task as it is now is attached.",
  428: 'If-Match is required to edit: nothing was saved.',
  422: 'The request is valid but names something that cannot be used.',
  429: 'A rate-limit control refused: wait Retry-After seconds.',
  500: 'Something failed on our side; the answer shows nothing of it.',
  503: 'The service cannot answer now: wait Retry-After seconds.',
};

function describeStatus(status: number): string {
  return STATUS_DESCRIPTIONS[status] ?? STATUS_CODES[status] ?? `Status ${status}`;
}

/** Whether the access level needs a signed-in caller. */
function signedIn(access: Access): boolean {
  return access === 'signed-in' || access === 'user' || access === 'admin';
}

function isApi(url: string): boolean {
  return url === '/api' || url.startsWith('/api/');
}

/**
 * @fastify/swagger copies a response header's schema as it is; `required` belongs to the header
 * object, not to its schema: moved there in the finished document.
 */
export function liftRequiredHeaders(document: {
  paths?: Record<
    string,
    Record<string, { responses?: Record<string, { headers?: Record<string, HeaderObject> }> }>
  >;
}): void {
  for (const operations of Object.values(document.paths ?? {}))
    for (const operation of Object.values(operations))
      for (const answer of Object.values(operation.responses ?? {}))
        for (const object of Object.values(answer.headers ?? {})) {
          if (object.schema?.required !== true) continue;
          delete object.schema.required;
          object.required = true;
        }
}

interface HeaderObject {
  schema?: Record<string, unknown>;
  required?: boolean;
}
