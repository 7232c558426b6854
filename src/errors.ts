// The table of every error code the API answers with: its HTTP status and its message for people.
import {
  BODY_LIMIT_BYTES,
  BULK_MAX_TASKS,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IMPORT_BODY_LIMIT_BYTES,
  PASSKEYS_MAX,
} from './limits.ts';

export const ERRORS = {
  VALIDATION_ERROR: { status: 400, message: 'The request is not valid.' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  BAD_REQUEST: { status: 400, message: 'The request is malformed.' },
  TASK_BULK_TOO_LARGE: { status: 400, message: `A bulk request may name at most ${BULK_MAX_TASKS} tasks.` },
  IDEMPOTENCY_KEY_INVALID: {
    status: 400,
    message: `An Idempotency-Key is 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters.`,
  },
  INVALID_CREDENTIALS: { status: 401, message: 'The email or password is not correct.' },
  UNAUTHENTICATED: { status: 401, message: 'Sign in to use this route.' },
  CSRF_INVALID: { status: 403, message: 'The CSRF token is missing or invalid.' },
  FORBIDDEN: { status: 403, message: 'Your role does not allow this.' },
  REAUTH_REQUIRED: { status: 403, message: 'Sign in again to change your passkeys.' },
  PASSWORD_CHANGE_REQUIRED: {
    status: 403,
    message: 'You signed in with a temporary password: choose a password of your own first.',
  },
  NOT_FOUND: { status: 404, message: 'Not found.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request took too long to arrive.' },
  IDEMPOTENCY_KEY_IN_FLIGHT: {
    status: 409,
    message: 'A request with this Idempotency-Key is still being processed. Try again in a moment.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    message: `The request body is too large: at most ${BODY_LIMIT_BYTES / 1024} KiB, or ${IMPORT_BODY_LIMIT_BYTES / 1024 / 1024} MiB for a task import.`,
  },
  EMAIL_TAKEN: { status: 409, message: 'An account with this email exists already.' },
  CLIENT_NAME_TAKEN: { status: 409, message: 'A client with this name exists already.' },
  TASK_CHANGED: {
    status: 412,
    message:
      'Someone changed this task since you loaded it: nothing was saved. Its current state is attached.',
  },
  PRECONDITION_REQUIRED: {
    status: 428,
    message: "Send If-Match with the task's ETag (or *) to edit it: nothing was saved.",
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Send the request body as application/json.' },
  ASSIGNEE_NOT_FOUND: { status: 422, message: 'The assignee is not an existing employee.' },
  CLIENT_NOT_FOUND: { status: 422, message: 'The client does not exist.' },
  IMPORT_INVALID: {
    status: 422,
    message: 'Some rows of the file are not valid: nothing was imported. Fix the rows listed and try again.',
  },
  PASSKEY_INVALID: { status: 422, message: 'The passkey could not be verified or is already registered.' },
  PASSKEY_LIMIT: { status: 422, message: `An account may have at most ${PASSKEYS_MAX} passkeys.` },
  CURRENT_PASSWORD_INVALID: { status: 422, message: 'Your current password is not correct.' },
  PASSWORD_REFUSED: { status: 422, message: 'This password cannot be used. Choose another one.' },
  LAST_ADMIN: {
    status: 422,
    message: 'This would leave no enabled admin: make another account an admin first.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message: 'This Idempotency-Key was used for another request. Send a new key with a new request.',
  },
  TASK_BULK_RATE_LIMIT: { status: 429, message: 'Too many bulk reassignments. Wait before trying again.' },
  TASK_IMPORT_RATE_LIMIT: { status: 429, message: 'Too many task imports. Wait before trying again.' },
  API_RATE_LIMIT_AUTHENTICATED: {
    status: 429,
    message: 'Too many requests for this user. Wait before trying again.',
  },
  API_RATE_LIMIT_UNAUTHENTICATED: {
    status: 429,
    message: 'Too many requests from this address. Wait before trying again.',
  },
  LOGIN_RATE_LIMIT: { status: 429, message: 'Too many failed sign-in attempts. Wait before trying again.' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'The requested range is not within the file.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are larger than 16 KiB.' },
  INTERNAL_ERROR: { status: 500, message: 'Something went wrong on our side.' },
  LOGIN_BUSY: {
    status: 503,
    message: 'Sign-in is very busy right now. Try again in a moment.',
  },
  RATE_LIMIT_STORE_UNAVAILABLE: {
    status: 503,
    message: 'The rate-limit store is unavailable. Try again shortly.',
  },
  PASSWORD_CHECK_UNAVAILABLE: {
    status: 503,
    message:
      'The new password could not be checked against breached passwords just now. Nothing was changed: try again shortly.',
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    message: 'The database cannot be reached right now. Try again shortly.',
  },
  // The two below are answered by the shipped proxy (deploy/nginx.conf) when no instance can, never
  // by an instance: nginx cannot import this table, so its copies are checked against it
  // (test/integration/nginx-proxy.test.ts).
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'The service cannot be reached right now. Try again shortly.',
  },
  GATEWAY_TIMEOUT: {
    status: 504,
    message: 'The service did not answer in time; the request may have been carried out.',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** Why one cell of an imported row is wrong (an IMPORT_INVALID's `errors[].code`). */
export const IMPORT_ROW_CODES = [
  'REQUIRED',
  'INVALID',
  'CLIENT_NOT_FOUND',
  'ASSIGNEE_NOT_FOUND',
  'EXTRA_CELLS',
] as const;
export type ImportRowCode = (typeof IMPORT_ROW_CODES)[number];

/** An error the API answers with as `{code, message, ...details}` and the status of its code. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    details: Readonly<Record<string, unknown>> = {},
    message: string = ERRORS[code].message,
  ) {
    super(message);
    this.code = code;
    this.details = details;
    this.name = 'ApiError';
    this.statusCode = ERRORS[code].status;
  }

  toBody(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details };
  }
}

export function errorBody(code: ErrorCode, details: Record<string, unknown> = {}): Record<string, unknown> {
  return { code, message: ERRORS[code].message, ...details };
}
