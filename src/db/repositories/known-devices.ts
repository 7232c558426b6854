// Known devices (docs/rules.md#known-devices): the browsers a device cookie went to, listed and forgotten.
import type { Queryable } from '../database.ts';

/** A known device as its owner sees it (docs/rules.md#accounts). */
export interface Device {
  id: number;
  /** ISO-8601, UTC: the first sign-in from this browser. */
  createdAt: string;
  /** The last sign-in from it. */
  lastUsedAt: string;
  userAgent: string | null;
}

/** The most known devices one account keeps; a sign-in from one more forgets the least recently used. */
export const KNOWN_DEVICES_MAX = 50;
/**
 * The cookies one browser's device keeps known: its newest, and a few before it (sign-ins of the
 * same browser in flight at once each issue one; the browser keeps whichever answered last).
 */
export const COOKIES_PER_DEVICE_MAX = 4;

interface DeviceRow {
  id: number;
  created_at: Date | string;
  last_used_at: Date | string;
  user_agent: string | null;
}

const toDevice = (row: DeviceRow): Device => ({
  id: row.id,
  createdAt: new Date(row.created_at).toISOString(),
  lastUsedAt: new Date(row.last_used_at).toISOString(),
  userAgent: row.user_agent,
});

export class KnownDevicesRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  /** The user's known devices, the most recently used first. */
  async list(userId: number): Promise<Device[]> {
    const rows = await this.db.query<DeviceRow>(
      `SELECT id, created_at, last_used_at, user_agent FROM known_devices
        WHERE user_id = $1 ORDER BY last_used_at DESC, id DESC`,
      [userId],
    );
    return rows.map(toDevice);
  }

  /** Forgets one of the user's devices; false when the user has none with this id. */
  async forget(userId: number, id: number): Promise<boolean> {
    const rows = await this.db.query('DELETE FROM known_devices WHERE user_id = $1 AND id = $2 RETURNING 1', [
      userId,
      id,
    ]);
    return rows.length > 0;
  }

  /** Forgets every device of the user but `keepDeviceId` (a cookie's device id; null keeps none); answers how many. */
  async forgetAllBut(userId: number, keepDeviceId: string | null): Promise<number> {
    // The cookies issued before the rows existed (migration 012) are forgotten with them.
    await this.db.query('UPDATE users SET devices_rowless_before = NULL WHERE id = $1', [userId]);
    const rows = await this.db.query(
      `DELETE FROM known_devices d WHERE d.user_id = $1 AND NOT EXISTS (
         SELECT 1 FROM device_cookies c WHERE c.known_device_id = d.id AND c.device_id = $2::text
       ) RETURNING 1`,
      [userId, keepDeviceId],
    );
    return rows.length;
  }

  /**
   * Deletes the cookies issued before `before` (epoch ms: expired by now) and the devices last
   * used before it (every cookie of theirs expired too); answers how many rows went.
   */
  async purgeUnusedSince(before: number): Promise<number> {
    const at = new Date(before).toISOString();
    const cookies = await this.db.query('DELETE FROM device_cookies WHERE issued_at < $1 RETURNING 1', [at]);
    const devices = await this.db.query('DELETE FROM known_devices WHERE last_used_at < $1 RETURNING 1', [
      at,
    ]);
    return cookies.length + devices.length;
  }
}
