// 503 LOGIN_BUSY, the one builder: a shed sign-in, a held password check, a full passkey challenge store.
import type { FastifyReply } from 'fastify';
import { errorBody } from '../errors.ts';
import type { WorkChallenge } from '../login/outcome.ts';

/**
 * Answers 503 LOGIN_BUSY with Retry-After (docs/rules.md#the-login-gate), and the challenge to
 * solve while the gate asks for proved work. Answered here, not thrown: under a flood these are
 * most answers, and none of them is a server error to log.
 */
export function sendLoginBusy(
  reply: FastifyReply,
  retryAfter: number,
  work: WorkChallenge | null = null,
): FastifyReply {
  return reply
    .code(503)
    .headers({ 'retry-after': retryAfter, 'cache-control': 'no-store' })
    .send(errorBody('LOGIN_BUSY', work ? { retryAfter, work } : { retryAfter }));
}
