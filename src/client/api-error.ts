// The error every failed call throws: the API's `{code, message}`, the status, and how long to wait.
import type { RateLimitState } from './rate-limit-headers.ts';

/**
 * Codes the API answers with (docs/rules.md#endpoints and #rate-limits), in the order of the server's table. A copy, since
 * the client imports nothing from the server: test/unit/client-contract.test.ts fails when it drifts.
 */
export const API_ERROR_CODES = [
  'VALIDATION_ERROR',
  'INVALID_JSON',
  'TASK_BULK_TOO_LARGE',
  'INVALID_CREDENTIALS',
  'UNAUTHENTICATED',
  'CSRF_INVALID',
  'FORBIDDEN',
  'NOT_FOUND',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'ASSIGNEE_NOT_FOUND',
  'TASK_BULK_RATE_LIMIT',
  'TASK_IMPORT_RATE_LIMIT',
  'IMPORT_INVALID',
  'API_RATE_LIMIT_AUTHENTICATED',
  'API_RATE_LIMIT_UNAUTHENTICATED',
  'LOGIN_RATE_LIMIT',
  'INTERNAL_ERROR',
  'RATE_LIMIT_STORE_UNAVAILABLE',
  'LOGIN_BUSY',
  'BAD_REQUEST',
  'REQUEST_TIMEOUT',
  'HEADERS_TOO_LARGE',
  'RANGE_NOT_SATISFIABLE',
  'DATABASE_UNAVAILABLE',
  'REAUTH_REQUIRED',
  'PASSKEY_INVALID',
  'PASSKEY_LIMIT',
  'SERVICE_UNAVAILABLE',
  'GATEWAY_TIMEOUT',
  'IDEMPOTENCY_KEY_INVALID',
  'IDEMPOTENCY_KEY_IN_FLIGHT',
  'IDEMPOTENCY_KEY_REUSED',
  'PASSWORD_CHANGE_REQUIRED',
  'EMAIL_TAKEN',
  'CURRENT_PASSWORD_INVALID',
  'PASSWORD_REFUSED',
  'LAST_ADMIN',
  'PASSWORD_CHECK_UNAVAILABLE',
  'CLIENT_NAME_TAKEN',
  'TASK_CHANGED',
  'PRECONDITION_REQUIRED',
  'CLIENT_NOT_FOUND',
] as const;

/** A code the API itself answers with. */
export type ServerErrorCode = (typeof API_ERROR_CODES)[number];

/** Codes this client makes up when there is no API error body to read. */
export type ClientErrorCode =
  /** The response was not the API's JSON error body (a proxy's page, say). */
  | 'UNEXPECTED_RESPONSE'
  /** No response at all: the network failed or the request was aborted. */
  | 'NETWORK_ERROR';

/** Any code an ApiError carries; other strings are possible from proxies or newer servers. */
export type ApiErrorCode = ServerErrorCode | ClientErrorCode | (string & {});

export class ApiError extends Error {
  /** The HTTP status; 0 when no response arrived. */
  readonly status: number;
  readonly code: ApiErrorCode;
  /** Seconds to wait before retrying (Retry-After, else the body's `retryAfter`); null when not told. */
  readonly retryAfter: number | null;
  /** The rate-limit state the response reported, if any. */
  readonly rateLimit: RateLimitState | null;
  /** The whole error body, for details such as `max` or `errors`. */
  readonly body: Readonly<Record<string, unknown>>;

  constructor(init: {
    status: number;
    code: ApiErrorCode;
    message: string;
    retryAfter?: number | null;
    rateLimit?: RateLimitState | null;
    body?: Record<string, unknown>;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ApiError';
    this.status = init.status;
    this.code = init.code;
    this.retryAfter = init.retryAfter ?? null;
    this.rateLimit = init.rateLimit ?? null;
    this.body = init.body ?? {};
  }

  /** True for the 429s, whatever the control. */
  get isRateLimited(): boolean {
    return this.status === 429;
  }
}

/** Whether `error` is an ApiError, optionally with one of `codes`. */
export function isApiError(error: unknown, ...codes: ApiErrorCode[]): error is ApiError {
  return error instanceof ApiError && (codes.length === 0 || codes.includes(error.code));
}
