// Session ids and CSRF tokens: random secrets, their digests, and HMAC bindings.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh 256-bit secret, URL-safe. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What the database stores in place of a session id: a leaked table yields no usable cookie. */
export function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/**
 * The CSRF token bound to a session id or to a pre-session cookie secret: an HMAC under the
 * server's secret, so a token is worthless without the very cookie it was made for.
 */
export function csrfTokenFor(
  serverSecret: string,
  scope: 'session' | 'pre-session',
  binding: string,
): string {
  return createHmac('sha256', serverSecret).update(`${scope}\0${binding}`).digest('base64url');
}

/** Compares a MAC a client sent with the one we computed, in constant time (for equal lengths). */
export function tokensEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
