// A sign-in's writes in one statement: the session, the device row, the last sign-in, the event.
import type { Queryable } from '../database.ts';
import { COOKIES_PER_DEVICE_MAX, KNOWN_DEVICES_MAX } from './known-devices.ts';
import { ACCOUNT_CHANGES_CHANNEL, type NewSession, SESSIONS_PER_ACCOUNT_MAX } from './sessions.ts';

export interface SignInWrite {
  readonly session: NewSession;
  /**
   * The password hash the sign-in was checked against (after its own rehash); null for a passkey.
   * Nothing is written unless the account still has it and is not disabled.
   */
  readonly verifiedHash: string | null;
  /** The device id of the cookie this sign-in issues. */
  readonly deviceId: string;
  /**
   * The device id of a valid cookie for this very account that the browser presented, if any: the
   * new cookie joins that browser's device (the same Device; its older cookies stay known until they
   * expire) instead of making a new one.
   */
  readonly previousDeviceId: string | null;
  /** The security event: how (`password`, `passkey`), whose account (normal form), from where. */
  readonly event: {
    readonly control: string;
    readonly email: string;
    readonly address: string | null;
    readonly instance: string;
  };
}

/**
 * Writes a sign-in: one statement, so one round trip and all or nothing. It starts by locking the
 * account's row, as every change of a password and every disable does first: a sign-in that meets
 * such a change still open waits for it and then reads the row as the change left it (PostgreSQL
 * re-checks a locked row), so it writes nothing after a change it overlapped; without the lock it
 * would check the old hash from its snapshot and insert a session the change's delete never saw. The event says whether the
 * browser was known (`signed-in`) or new (`signed-in-new-device`); answers the same. What one
 * password holder can pile up by signing in again and again is bounded: an account keeps at most
 * KNOWN_DEVICES_MAX devices (a new one beyond forgets the least recently used), a device its
 * COOKIES_PER_DEVICE_MAX newest cookies, and an account SESSIONS_PER_ACCOUNT_MAX sessions (a new
 * one beyond ends the least recently used, announced so that no instance serves it from a cache,
 * and a `session-ended` event of control `session-limit`).
 */
export async function writeSignIn(
  db: Queryable,
  write: SignInWrite,
): Promise<{ written: boolean; newDevice: boolean; endedSessions: number }> {
  const { session, event } = write;
  const [row] = await db.query<{ written: boolean; known: boolean; ended: string | number }>(
    `WITH still AS (
       SELECT 1 FROM users WHERE id = $2 AND disabled_at IS NULL
          AND ($16::text IS NULL OR password_hash = $16::text)
          FOR NO KEY UPDATE
     ), session AS (
       INSERT INTO sessions (id_hash, user_id, expires_at, signed_in_at, created_at, last_seen_at, user_agent)
       SELECT $1, $2, $4::timestamptz, $3::timestamptz, $3::timestamptz, $3::timestamptz, $5::text
        WHERE EXISTS (SELECT 1 FROM still)
     ), previous AS (
       SELECT d.id FROM device_cookies c JOIN known_devices d ON d.id = c.known_device_id
        WHERE c.device_id = $7::text AND d.user_id = $2 AND EXISTS (SELECT 1 FROM still)
     ), renewed AS (
       UPDATE known_devices SET last_used_at = $3::timestamptz, user_agent = $5::text
        WHERE id IN (SELECT id FROM previous) RETURNING id
     ), added AS (
       INSERT INTO known_devices (user_id, created_at, last_used_at, user_agent)
       SELECT $2, $3::timestamptz, $3::timestamptz, $5::text
        WHERE NOT EXISTS (SELECT 1 FROM previous) AND EXISTS (SELECT 1 FROM still)
       RETURNING id
     ), cookie AS (
       INSERT INTO device_cookies (device_id, known_device_id, issued_at)
       SELECT $6, id, $3::timestamptz FROM (SELECT id FROM renewed UNION ALL SELECT id FROM added) AS device
     ), trimmed AS (
       DELETE FROM known_devices WHERE NOT EXISTS (SELECT 1 FROM previous) AND EXISTS (SELECT 1 FROM still) AND id IN (
         SELECT id FROM known_devices WHERE user_id = $2 ORDER BY last_used_at DESC, id DESC OFFSET $12::int - 1
       )
     ), stale_cookies AS (
       DELETE FROM device_cookies WHERE known_device_id IN (SELECT id FROM previous) AND device_id NOT IN (
         SELECT device_id FROM device_cookies WHERE known_device_id IN (SELECT id FROM previous)
          ORDER BY issued_at DESC, device_id DESC LIMIT $13::int - 1
       )
     ), ended AS (
       DELETE FROM sessions WHERE EXISTS (SELECT 1 FROM still) AND id_hash IN (
         SELECT id_hash FROM sessions WHERE user_id = $2
          ORDER BY last_seen_at DESC NULLS LAST, created_at DESC OFFSET $14::int - 1
       ) RETURNING user_id
     ), ended_event AS (
       INSERT INTO security_events (at, type, control, email, address, instance)
       SELECT $3::timestamptz, 'session-ended', 'session-limit', $9, $10, $11 FROM ended
     ), signed AS (
       UPDATE users SET last_sign_in_at = $3::timestamptz WHERE id = $2 AND EXISTS (SELECT 1 FROM still)
     ), event AS (
       INSERT INTO security_events (at, type, control, email, address, instance)
       SELECT $3::timestamptz,
              CASE WHEN EXISTS (SELECT 1 FROM previous) THEN 'signed-in' ELSE 'signed-in-new-device' END,
              $8, $9, $10, $11
        WHERE EXISTS (SELECT 1 FROM still)
     )
     SELECT EXISTS (SELECT 1 FROM still) AS written, EXISTS (SELECT 1 FROM previous) AS known,
            (SELECT count(pg_notify($15, user_id::text)) FROM ended) AS ended`,
    [
      session.idHash,
      session.userId,
      new Date(session.signedInAt).toISOString(),
      new Date(session.expiresAt).toISOString(),
      session.userAgent,
      write.deviceId,
      write.previousDeviceId,
      event.control,
      event.email,
      event.address,
      event.instance,
      KNOWN_DEVICES_MAX,
      COOKIES_PER_DEVICE_MAX,
      SESSIONS_PER_ACCOUNT_MAX,
      ACCOUNT_CHANGES_CHANNEL,
      write.verifiedHash,
    ],
  );
  return {
    written: row?.written === true,
    newDevice: row?.known !== true,
    endedSessions: Number(row?.ended ?? 0),
  };
}
