// The request lists autocannon cycles through: the same bytes for every target, one entry per user.
import type autocannon from 'autocannon';
import type { BenchSession } from './serve.ts';

/** A stand-in session cookie of a real one's length, for runs without our server. */
const PLACEHOLDER_COOKIE = `tp_session=${'x'.repeat(43)}.${'y'.repeat(32)}`;

/**
 * GET /api/auth/me for users 1…n: the library peers and the floor know the user by `x-user-id`,
 * ours and the stacks by their own session cookie (a real login); every target gets both headers.
 */
export function meRequests(users: number, sessions: readonly BenchSession[] | null): autocannon.Request[] {
  return Array.from({ length: users }, (_, i) => ({
    method: 'GET',
    path: '/api/auth/me',
    headers: { 'x-user-id': String(i + 1), cookie: sessions?.[i]?.cookie ?? PLACEHOLDER_COOKIE },
  }));
}
