// The request limits the API enforces and states in its messages and schemas: each declared once, here.

/** Request bodies larger than this are answered 413 PAYLOAD_TOO_LARGE. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** The most tasks one bulk reassignment may name (more: 400 TASK_BULK_TOO_LARGE). */
export const BULK_MAX_TASKS = 50;

/** The shortest password an account may be given, wherever it is set (auth/password-rules.ts). */
export const MIN_PASSWORD_LENGTH = 12;

/** The longest password an account may be given (a longer one is refused, never cut). */
export const MAX_PASSWORD_LENGTH = 128;

/** How long a temporary password (an admin's add or reset) signs in before it must have been changed. */
export const TEMPORARY_PASSWORD_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The longest password the sign-in takes, in characters (code points): longer is a 400 there. A
 * password set since the password rules is at most MAX_PASSWORD_LENGTH; this bound is the sign-in's.
 */
export const SIGN_IN_PASSWORD_MAX_LENGTH = 1024;

/**
 * Text no request may carry into storage or a check: U+0000, or a surrogate that is not half of a
 * pair (the `u` flag reads pairs as one code point). Request validation refuses it in every string,
 * and a password containing it could never sign in.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is the character to find.
export const UNSTORABLE_TEXT = /[\u0000\p{Cs}]/u;

/** The most passkeys one account may hold (more: 422 PASSKEY_LIMIT, docs/rules.md#passkeys). */
export const PASSKEYS_MAX = 10;

/**
 * Proved-work challenges are issued in series of at most this many slots, one bit of the claim
 * record each (docs/rules.md#proved-work): a series' record is at most an eighth of this in bytes.
 */
export const WORK_SERIES_SLOTS = 1 << 22;

/** A passkey's name: 1 to this many characters. */
export const PASSKEY_NAME_MAX = 64;

/** An Idempotency-Key is 1 to this many printable ASCII characters (more: 400 IDEMPOTENCY_KEY_INVALID). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/**
 * How long a request may take to arrive (Node's `server.requestTimeout`, set in src/server.ts), and
 * so the longest an Idempotency-Key's in-flight mark blocks a repeat: a mark older than this
 * belongs to a request no instance is still working on (its process died before answering).
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** A task import's body: at most this many bytes (more: 413 PAYLOAD_TOO_LARGE); the only route past BODY_LIMIT_BYTES. */
export const IMPORT_BODY_LIMIT_BYTES = 20 * 1024 * 1024;

/** A task import's rows besides its header, at most (more: 413 PAYLOAD_TOO_LARGE). */
export const IMPORT_MAX_ROWS = 100_000;
