// A person's own passkeys (docs/rules.md#passkeys): list, register after a recent sign-in, rename, remove.
import {
  type PasskeyCeremonies,
  type PublicKeyCredentialCreationOptionsJSON,
  REAUTH_WINDOW_MS,
  type RegistrationResponseJSON,
  type RelyingParty,
  secondsOf,
} from '../auth/passkeys.ts';
import type { Clock } from '../clock.ts';
import type { Passkey, PasskeysRepository } from '../db/repositories/passkeys.ts';
import { normaliseEmail } from '../email.ts';
import { PASSKEYS_MAX } from '../limits.ts';
import type { SecurityEventSink } from '../security-event.ts';
import type { Owner } from './own-account.ts';

export interface OwnPasskeysOptions {
  readonly passkeys: Pick<
    PasskeysRepository,
    'list' | 'credentialsOf' | 'userHandle' | 'add' | 'rename' | 'remove'
  >;
  readonly ceremonies: Pick<PasskeyCeremonies, 'registrationOptions' | 'verifyRegistration'>;
  /** Where `passkey-added` and `passkey-removed` are recorded. */
  readonly events: SecurityEventSink;
  readonly clock: Clock;
}

/** The owner as a registration sees them: their session, and when it signed in. */
export interface PasskeyOwner extends Owner {
  /** The session the challenge is bound to. */
  readonly sessionId: string;
  /** When the session signed in (epoch ms), or null when unknown. */
  readonly signedInAt: number | null;
}

/** Why a registration step is refused: no recent sign-in, no usable host, PASSKEYS_MAX reached. */
export type RegistrationRefusal = 'reauth-required' | 'no-relying-party' | 'limit';

export type RegistrationOptionsOutcome =
  | { readonly kind: 'options'; readonly options: PublicKeyCredentialCreationOptionsJSON }
  | { readonly kind: RegistrationRefusal }
  /** The store of challenges is full: refused, rather than another session's challenge dropped. */
  | { readonly kind: 'busy'; readonly retryAfter: number };

export type RegistrationOutcome =
  | { readonly kind: 'added'; readonly passkey: Passkey }
  | { readonly kind: RegistrationRefusal }
  /** The answer does not verify, or its credential is registered already (to anyone). */
  | { readonly kind: 'invalid' };

export class OwnPasskeys {
  private readonly options: OwnPasskeysOptions;

  constructor(options: OwnPasskeysOptions) {
    this.options = options;
  }

  /** The owner's passkeys, oldest first. */
  list(userId: number): Promise<Passkey[]> {
    return this.options.passkeys.list(userId);
  }

  /**
   * Creation options for a new passkey, its challenge bound to the owner's session, for `rp` (the
   * relying party the request speaks to; null when it names no usable host).
   */
  async registrationOptions(
    owner: PasskeyOwner,
    rp: RelyingParty | null,
  ): Promise<RegistrationOptionsOutcome> {
    if (!this.signedInRecently(owner)) return { kind: 'reauth-required' };
    const { user } = owner;
    const existing = await this.options.passkeys.credentialsOf(user.id);
    if (existing.length >= PASSKEYS_MAX) return { kind: 'limit' };
    const handle = await this.options.passkeys.userHandle(user.id);
    if (rp === null) return { kind: 'no-relying-party' };
    const issued = await this.options.ceremonies.registrationOptions(
      rp,
      user,
      handle,
      existing,
      owner.sessionId,
    );
    if (issued.options === undefined) return { kind: 'busy', retryAfter: secondsOf(issued) };
    return { kind: 'options', options: issued.options };
  }

  /** Stores the passkey the browser's answer to the creation options proves, named `name`, with its event. */
  async register(
    owner: PasskeyOwner,
    rp: RelyingParty | null,
    response: RegistrationResponseJSON,
    name: string,
  ): Promise<RegistrationOutcome> {
    if (!this.signedInRecently(owner)) return { kind: 'reauth-required' };
    if (rp === null) return { kind: 'no-relying-party' };
    const credential = await this.options.ceremonies.verifyRegistration(rp, response, owner.sessionId);
    if (!credential) return { kind: 'invalid' };
    const added = await this.options.passkeys.add(
      owner.user.id,
      { ...credential, name },
      PASSKEYS_MAX,
      this.options.clock.now(),
    );
    if (added === null) return { kind: 'limit' };
    if (added === 'taken') return { kind: 'invalid' };
    this.record(owner, 'passkey-added');
    return { kind: 'added', passkey: added };
  }

  /** Renames one of the owner's passkeys; null when they have none with this id. */
  rename(owner: Owner, passkeyId: number, name: string): Promise<Passkey | null> {
    return this.options.passkeys.rename(owner.user.id, passkeyId, name);
  }

  /** Removes one of the owner's passkeys, with its event; false when they have none with this id. */
  async remove(owner: Owner, passkeyId: number): Promise<boolean> {
    if (!(await this.options.passkeys.remove(owner.user.id, passkeyId))) return false;
    this.record(owner, 'passkey-removed');
    return true;
  }

  /** Registering needs a sign-in within the last 10 minutes of this session (docs/rules.md#passkeys). */
  private signedInRecently(owner: PasskeyOwner): boolean {
    return owner.signedInAt !== null && this.options.clock.now() - owner.signedInAt <= REAUTH_WINDOW_MS;
  }

  private record(owner: Owner, type: 'passkey-added' | 'passkey-removed'): void {
    this.options.events.record({
      type,
      control: 'passkey',
      email: normaliseEmail(owner.user.email),
      address: owner.address,
    });
  }
}
