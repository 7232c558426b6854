// A sign-in's write, password or passkey alike: a new session and device cookie, with its event.
import type { DeviceCookies } from '../auth/devices.ts';
import type { MintedSession, SessionService } from '../auth/sessions.ts';
import type { Queryable } from '../db/database.ts';
import { writeSignIn } from '../db/repositories/sign-ins.ts';
import type { User } from '../db/repositories/users.ts';
import { normaliseEmail } from '../email.ts';

export interface SignInsOptions {
  readonly db: Queryable;
  readonly sessions: Pick<SessionService, 'destroy' | 'mint' | 'forgetUser'>;
  readonly devices: Pick<DeviceCookies, 'issue' | 'read' | 'maxAgeSeconds'>;
  /** The instance id events carry. */
  readonly instance: string;
}

/** A sign-in whose credential was checked, and what its request brought. */
export interface SignIn {
  readonly user: User;
  /** The hash the password was checked against (after its own rehash); null for a passkey. */
  readonly verifiedHash: string | null;
  readonly how: 'password' | 'passkey';
  /** The session cookie the browser sent, if any. */
  readonly previousSession: string | undefined;
  /** The device cookie the browser sent, if any. */
  readonly deviceCookie: string | undefined;
  readonly userAgent: string | undefined;
  /** The client address key. */
  readonly address: string | null;
}

/** What the browser is given: the new session, and a fresh device cookie. */
export interface SignedIn {
  readonly session: MintedSession;
  readonly device: { readonly value: string; readonly maxAgeSeconds: number };
}

export class SignIns {
  private readonly options: SignInsOptions;

  constructor(options: SignInsOptions) {
    this.options = options;
  }

  /**
   * Signs `user` in: a new session id at every sign-in (the session the browser came with ends: an
   * id planted before it is worthless after it), a fresh device cookie (docs/rules.md#known-devices).
   * The session, the browser's known-device row, the account's last sign-in and the `signed-in`
   * security event are one statement (writeSignIn), which writes nothing when the account moved on
   * since its password was checked (a reset, a password change or a disable landed meanwhile): null.
   */
  async start(signIn: SignIn): Promise<SignedIn | null> {
    const { sessions, devices } = this.options;
    const { user } = signIn;
    if (signIn.previousSession) await sessions.destroy(signIn.previousSession);
    const session = sessions.mint(user.id, signIn.userAgent);
    const device = devices.issue(user.id);
    // This browser's cookie for this very account renews its known-device row: the same Device.
    const presented = devices.read(signIn.deviceCookie);
    const { written, endedSessions } = await writeSignIn(this.options.db, {
      session: session.row,
      verifiedHash: signIn.verifiedHash,
      deviceId: device.claim.deviceId,
      previousDeviceId: presented?.userId === user.id ? presented.deviceId : null,
      event: {
        control: signIn.how,
        email: normaliseEmail(user.email),
        address: signIn.address,
        instance: this.options.instance,
      },
    });
    if (!written) return null;
    // The account's least recently used session, beyond its most: this instance stops serving it now.
    if (endedSessions > 0) sessions.forgetUser(user.id);
    return { session, device: { value: device.value, maxAgeSeconds: devices.maxAgeSeconds } };
  }
}
