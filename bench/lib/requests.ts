// The request lists autocannon cycles through: the same bytes for every target, one entry per user.
import type autocannon from 'autocannon';
import type { BenchSession } from '../targets/ours.ts';

/** A stand-in session cookie of a real one's length, for runs without our server. */
const PLACEHOLDER_COOKIE = `tp_session=${'x'.repeat(43)}.${'y'.repeat(32)}`;

/**
 * GET /api/auth/me for users 1…n: peers key by `x-user-id`, ours by the session cookie; every
 * target gets both headers, so the bytes on the wire are the same.
 */
export function meRequests(users: number, sessions: readonly BenchSession[] | null): autocannon.Request[] {
  return Array.from({ length: users }, (_, i) => ({
    method: 'GET',
    path: '/api/auth/me',
    headers: { 'x-user-id': String(i + 1), cookie: sessions?.[i]?.cookie ?? PLACEHOLDER_COOKIE },
  }));
}

export const BULK_SIZE = 50;

/**
 * PATCH /api/employee/tasks/bulk: session k reassigns the k-th block of 50 demo tasks to one of the
 * three demo employees, so consecutive requests touch different rows.
 */
export function bulkRequests(sessions: readonly BenchSession[], blocks: number): autocannon.Request[] {
  return Array.from({ length: blocks }, (_, k) => {
    const session = sessions[k % sessions.length]!;
    return {
      method: 'PATCH',
      path: '/api/employee/tasks/bulk',
      headers: {
        cookie: session.cookie,
        'x-csrf-token': session.csrfToken,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        taskIds: Array.from({ length: BULK_SIZE }, (_, i) => k * BULK_SIZE + i + 1),
        assigneeId: (k % 3) + 1,
      }),
    };
  });
}
