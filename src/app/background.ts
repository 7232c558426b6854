// What the app does away from requests: the purges of what expired, and hearing other instances' changes.
import type { FastifyBaseLogger } from 'fastify';
import { schedulePurge } from '../auth/purge-schedule.ts';
import { SECURITY_EVENT_PURGE_INTERVAL_MS } from '../auth/security-event-log.ts';
import { SESSION_PURGE_INTERVAL_MS } from '../auth/sessions.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { IDEMPOTENCY_KEY_PURGE_INTERVAL_MS } from '../db/repositories/idempotency-keys.ts';
import { ACCOUNT_CHANGES_CHANNEL } from '../db/repositories/sessions.ts';
import type { Services } from '../http/services.ts';
import type { Repositories } from './repositories.ts';

export interface BackgroundWork {
  /** Stops the purges (waiting for one under way) and the listening, so the database may close. */
  stop(): Promise<void>;
}

export async function startBackgroundWork(parts: {
  readonly config: Config;
  readonly clock: Clock;
  readonly db: Database;
  readonly repositories: Repositories;
  readonly services: Pick<Services, 'sessions' | 'securityEvents'>;
  readonly log: FastifyBaseLogger;
}): Promise<BackgroundWork> {
  const { config, clock, db, repositories, services, log } = parts;
  const securityEventPurge = schedulePurge(
    () => services.securityEvents.purgeExpired(),
    (error) => log.error({ err: error }, 'security event purge failed'),
    SECURITY_EVENT_PURGE_INTERVAL_MS,
  );
  // Every instance drops what it cached of an account as soon as any instance announces a change
  // of it (a session ended, a role changed): ended sessions end everywhere at once.
  let heard = false;
  const accountChanges = await db.listen(ACCOUNT_CHANGES_CHANNEL, {
    message(payload) {
      const userId = Number(payload);
      if (Number.isSafeInteger(userId)) services.sessions.forgetUser(userId);
    },
    state(listening) {
      services.sessions.setCoherent(listening);
      if (listening === heard) return;
      heard = listening;
      if (listening) log.info('hearing account changes: sessions are cached again');
      else log.warn('account changes unheard: every request reads its session from the database');
    },
  });
  const sessionPurge = schedulePurge(
    async () =>
      (await services.sessions.purgeExpired()) +
      // A device row outlives its cookie by nothing: one whose last cookie expired goes too.
      (await repositories.knownDevices.purgeUnusedSince(clock.now() - config.deviceCookieTtlMs)),
    (error) => log.error({ err: error }, 'session purge failed'),
    SESSION_PURGE_INTERVAL_MS,
  );
  const idempotencyKeyPurge = schedulePurge(
    () => repositories.idempotencyKeys.deleteExpired(clock.now()),
    (error) => log.error({ err: error }, 'idempotency key purge failed'),
    IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
  );
  return {
    async stop() {
      await sessionPurge.stop();
      await accountChanges.close();
      await idempotencyKeyPurge.stop();
      await securityEventPurge.stop();
    },
  };
}
