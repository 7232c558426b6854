// The one normal form of an email address, used to find its account and to key its login failures.

/**
 * Trimmed, NFKC-normalised and case-folded. Account lookup and the login-failure key both use this
 * form, so no spelling of an address (`Alice@…`, `alİce@…`) reaches an account under a budget
 * other than that account's own.
 */
export function normaliseEmail(email: string): string {
  return email.trim().normalize('NFKC').toLowerCase();
}

/** Whether `email` looks like an address an account may have: one `@`, something either side, no spaces, at most 254 characters. */
export function isEmailAddress(email: string): boolean {
  const trimmed = email.trim();
  return trimmed.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(trimmed);
}
