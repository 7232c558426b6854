// Device cookies (docs/rules.md#known-devices): a signed, versioned proof that this browser logged in to one
// account before.
import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { tokensEqual } from './tokens.ts';

export const DEVICE_COOKIE = 'tp_device';
/** Only the login and logout routes ever see the cookie. */
export const DEVICE_COOKIE_PATH = '/api/auth';

/** Bumped when the layout changes: a cookie of another version is simply unknown. */
const VERSION = 'd1';
const VALUE_PATTERN = /^d1\.([A-Za-z0-9_-]{22})\.([1-9]\d{0,9})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/;

/** What a cookie whose signature holds says: this device id was issued to this user at this time. */
export interface DeviceClaim {
  /** 128 random bits, base64url: the key of the device's own failure budget (login-device). */
  readonly deviceId: string;
  readonly userId: number;
  /** Epoch ms. */
  readonly issuedAt: number;
}

export interface DeviceCookiesOptions {
  /** SESSION_SECRET: a key for device cookies alone is derived from it. */
  readonly secret: string;
  /** DEVICE_COOKIE_TTL. */
  readonly ttlMs: number;
  readonly clock: Clock;
}

export class DeviceCookies {
  private readonly key: Buffer;
  private readonly ttlMs: number;
  private readonly clock: Clock;

  constructor(options: DeviceCookiesOptions) {
    // Its own key: a MAC made for a session or a CSRF token can never pass as a device cookie.
    this.key = createHmac('sha256', options.secret).update('tp-device-cookie').digest();
    this.ttlMs = options.ttlMs;
    this.clock = options.clock;
  }

  get maxAgeSeconds(): number {
    return Math.floor(this.ttlMs / 1000);
  }

  /** A fresh device id for `userId`, issued now: the value to set as the cookie. */
  issue(userId: number): { value: string; claim: DeviceClaim } {
    const claim: DeviceClaim = {
      deviceId: randomBytes(16).toString('base64url'),
      userId,
      issuedAt: this.clock.now(),
    };
    const body = `${VERSION}.${claim.deviceId}.${claim.userId}.${claim.issuedAt.toString(36)}`;
    return { value: `${body}.${this.mac(body)}`, claim };
  }

  /**
   * The claim of a cookie that is well formed, signed by us (compared in constant time) and not
   * expired; null for anything else. Whether it is still *known* for an account is `knownFor`'s
   * question, which needs the account's revocation time.
   */
  read(value: string | undefined): DeviceClaim | null {
    if (!value) return null;
    const match = VALUE_PATTERN.exec(value);
    if (!match) return null;
    const body = value.slice(0, value.lastIndexOf('.'));
    if (!tokensEqual(match[4]!, this.mac(body))) return null;
    const issuedAt = Number.parseInt(match[3]!, 36);
    const now = this.clock.now();
    if (!(issuedAt <= now && now < issuedAt + this.ttlMs)) return null;
    return { deviceId: match[1]!, userId: Number(match[2]), issuedAt };
  }

  /**
   * Whether the claim makes a login to this account a known-device attempt: issued for this very
   * user, and after the account's devices were last revoked (an admin reset).
   */
  static knownFor(claim: DeviceClaim | null, userId: number, devicesValidAfter: number | null): boolean {
    return (
      claim !== null &&
      claim.userId === userId &&
      (devicesValidAfter === null || claim.issuedAt > devicesValidAfter)
    );
  }

  /**
   * THE rule of a known-device attempt (docs/rules.md#known-devices), as the sign-in and the budget
   * report both decide it: the claim is known for the account, and the account still has the device
   * (its row, which forgetting removes).
   */
  static known(
    claim: DeviceClaim | null,
    account: {
      readonly userId: number;
      readonly devicesValidAfter: number | null;
      readonly deviceKnown: boolean;
    },
  ): boolean {
    return account.deviceKnown && DeviceCookies.knownFor(claim, account.userId, account.devicesValidAfter);
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
