// The typed API client's public surface: import from here.
export {
  ApiClient,
  type ApiClientOptions,
  BULK_RETRIES,
  type BulkReassignOptions,
  type BulkReassignOutcome,
  type CallOptions,
  type CreateTaskOutcome,
  type ImportOutcome,
  LOGIN_WORK_ROUNDS,
  type LoginOptions,
  newIdempotencyKey,
  type RetryPolicy,
} from './api-client.ts';
export {
  API_ERROR_CODES,
  ApiError,
  type ApiErrorCode,
  type ClientErrorCode,
  isApiError,
  type ServerErrorCode,
} from './api-error.ts';
export { type CookieJar, MemoryCookieJar } from './cookie-jar.ts';
export {
  type HeaderSource,
  parseRateLimit,
  parseRetryAfter,
  type RateLimitState,
} from './rate-limit-headers.ts';
export * from './types.ts';
export {
  leadingZeroBits,
  searchNonce,
  solveInSlices,
  WORK_BITS_MAX,
  type WorkAsked,
  type WorkFound,
  type WorkSolver,
  workMessage,
} from './work-solver.ts';
