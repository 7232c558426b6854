// The rate-limit controls' names: imports nothing, so the typed client shares this list
// (src/client/types.ts).

/** The policy names, as sent in the headers and in GET /api/rate-limits (and RATE_LIMIT_SHADOW). */
export const CONTROL_NAMES = [
  'task-bulk',
  'task-import',
  'api-authenticated',
  'api-unauthenticated',
  'login-account',
  'login-ip',
  'login-device',
  'passkey-options',
] as const;

export type ControlName = (typeof CONTROL_NAMES)[number];
