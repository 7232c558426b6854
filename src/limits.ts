// The request limits the API enforces and states in its messages and schemas: each declared once, here.

/** Request bodies larger than this are answered 413 PAYLOAD_TOO_LARGE. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** The most tasks one bulk reassignment may name (more: 400 TASK_BULK_TOO_LARGE). */
export const BULK_MAX_TASKS = 50;

/** The shortest password an account may be given (BOOTSTRAP_ADMIN_PASSWORD, the account command line). */
export const MIN_PASSWORD_LENGTH = 12;

/**
 * The longest password the sign-in takes, in characters (code points): a longer one is a 400 there,
 * so it is refused wherever a password is set too.
 */
export const PASSWORD_MAX_LENGTH = 1024;

/**
 * Text no request may carry into storage or a check: U+0000, or a surrogate that is not half of a
 * pair (the `u` flag reads pairs as one code point). Request validation refuses it in every string,
 * and a password containing it could never sign in.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is the character to find.
export const UNSTORABLE_TEXT = /[\u0000\p{Cs}]/u;

/** The most passkeys one account may hold (more: 422 PASSKEY_LIMIT, contract §14). */
export const PASSKEYS_MAX = 10;

/** A passkey's name: 1 to this many characters. */
export const PASSKEY_NAME_MAX = 64;
