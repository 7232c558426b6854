// WebAuthn ceremonies (docs/rules.md#passkeys) on SimpleWebAuthn: options with single-use challenges,
// registration and sign-in checks.
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { StoredCredential } from '../db/repositories/passkeys.ts';
import type { User } from '../db/repositories/users.ts';
import { digest } from './tokens.ts';

/** How long a challenge works, from the options that carry it (docs/rules.md#passkeys). */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** Registering asks for a sign-in at most this long ago (docs/rules.md#passkeys). */
export const REAUTH_WINDOW_MS = 10 * 60 * 1000;
/** What the browser shows as the relying party's name. */
const RP_NAME = 'Task portal';
/**
 * The key types offered and accepted: EdDSA, ES256, RS256 (SimpleWebAuthn's defaults without
 * ML-DSA, whose runtime check prints an experimental-feature warning on Node at every start).
 */
const ALGORITHMS = [-8, -7, -257];

/**
 * Where challenges are kept between the options and the answer: the rate-limit store's single-use
 * marks (src/rate-limit/stores/store.ts), shared by the fleet, one per holder (here a browser), a
 * bounded number per scope. Declared here by shape, since this layer imports nothing of the rate
 * limiter. `putOnce` answers 0 when the mark is kept, else the ms until the full store has room.
 */
export interface ChallengeMarks {
  putOnce(scope: string, holder: string, mark: string, ttlMs: number): number | Promise<number>;
  takeOnce(scope: string, holder: string, mark: string): boolean | Promise<boolean>;
}

/**
 * Options with their challenge kept, or none: the store of challenges is full, and keeping one
 * would mean dropping another browser's live challenge (docs/rules.md#passkeys). The caller
 * answers 503 LOGIN_BUSY with the wait.
 */
export type Issued<T> =
  | { readonly options: T; readonly retryAfterMs?: undefined }
  | { readonly options?: undefined; readonly retryAfterMs: number };

let library: Promise<
  typeof import('@simplewebauthn/server') & typeof import('@simplewebauthn/server/helpers')
> | null = null;

/**
 * SimpleWebAuthn, with the ASN.1 and X.509 parsers it brings, loaded at the first ceremony: an
 * instance on which nobody uses a passkey never holds them (about 5 MB of RSS and 0.1 s of start:
 * BENCHMARKS.md).
 */
function webAuthn() {
  library ??= Promise.all([import('@simplewebauthn/server'), import('@simplewebauthn/server/helpers')]).then(
    ([server, helpers]) => ({ ...server, ...helpers }),
  );
  return library;
}

/** The whole seconds of a full challenge store's wait, for Retry-After: at least 1. */
export function secondsOf({ retryAfterMs }: { readonly retryAfterMs: number }): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}

/** The service's own origin (docs/rules.md#authentication-and-csrf) and the RP ID it implies: its host, without port. */
export interface RelyingParty {
  readonly origin: string;
  readonly rpId: string;
}

export function relyingParty(origin: string): RelyingParty {
  const url = new URL(origin);
  return { origin: url.origin, rpId: url.hostname };
}

/** The browser's answers, as its toJSON() sends them; SimpleWebAuthn checks every field. */
export type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON };

export type AssertionOutcome =
  | { readonly ok: true; readonly counter: number }
  /** `cloned`: the signature holds but the counter did not move forward (docs/rules.md#passkeys). */
  | { readonly ok: false; readonly cloned: boolean };

export class PasskeyCeremonies {
  private readonly marks: ChallengeMarks;

  constructor(marks: ChallengeMarks) {
    this.marks = marks;
  }

  /**
   * Creation options for `user` (a discoverable credential preferred, user verification required,
   * attestation none, `exclude` listed), with a challenge bound to `binding` (the session id).
   */
  async registrationOptions(
    rp: RelyingParty,
    user: User,
    userHandle: string,
    exclude: readonly { id: string; transports: string[] }[],
    binding: string,
  ): Promise<Issued<PublicKeyCredentialCreationOptionsJSON>> {
    const { generateRegistrationOptions, isoBase64URL } = await webAuthn();
    const options = await generateRegistrationOptions({
      rpName: RP_NAME,
      rpID: rp.rpId,
      userName: user.email,
      userDisplayName: user.name,
      userID: isoBase64URL.toBuffer(userHandle),
      attestationType: 'none',
      excludeCredentials: exclude.map((credential) => ({ ...credential })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      supportedAlgorithmIDs: ALGORITHMS,
    });
    return this.keep('passkey-create', binding, options);
  }

  /**
   * The credential a registration answer proves, or null when it does not verify: a challenge
   * that is not this session's, used or expired, another origin or RP ID, no user verification.
   */
  async verifyRegistration(rp: RelyingParty, response: RegistrationResponseJSON, binding: string) {
    const { verifyRegistrationResponse, isoBase64URL } = await webAuthn();
    try {
      const verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: (challenge) => this.take('passkey-create', binding, challenge),
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGORITHMS,
      });
      if (!verified.verified) return null;
      const { credential } = verified.registrationInfo;
      return {
        credentialId: credential.id,
        publicKey: isoBase64URL.fromBuffer(credential.publicKey),
        counter: credential.counter,
        transports: credential.transports ?? [],
      };
    } catch {
      return null; // malformed CBOR, a wrong challenge, origin or flag: one answer for all
    }
  }

  /**
   * Request options for a sign-in: a fresh challenge bound to `binding`, no allowCredentials. It
   * replaces the browser's previous sign-in challenge: a browser holds one at a time.
   */
  async signInOptions(
    rp: RelyingParty,
    binding: string,
  ): Promise<Issued<PublicKeyCredentialRequestOptionsJSON>> {
    const { generateAuthenticationOptions } = await webAuthn();
    const options = await generateAuthenticationOptions({
      rpID: rp.rpId,
      userVerification: 'required',
      timeout: PASSKEY_CHALLENGE_TTL_MS,
    });
    return this.keep('passkey-get', binding, options);
  }

  /**
   * Takes the sign-in challenge the answer carries, whatever comes next: a challenge works once,
   * even for an answer that then fails. The challenge, or null when it was not this browser's,
   * used or expired, or the answer is malformed.
   */
  async takeSignInChallenge(response: AuthenticationResponseJSON, binding: string): Promise<string | null> {
    const { decodeClientDataJSON } = await webAuthn();
    let challenge: unknown;
    try {
      challenge = decodeClientDataJSON(response.response.clientDataJSON).challenge;
    } catch {
      return null;
    }
    return typeof challenge === 'string' && (await this.take('passkey-get', binding, challenge))
      ? challenge
      : null;
  }

  /**
   * Checks a sign-in answer against the stored credential and the challenge taken for it. The
   * counter is compared here, after the signature, not by SimpleWebAuthn (which compares it before
   * the signature): only a signed answer may report a clone, or anyone who knows a credential id
   * could fill the security events.
   */
  async verifyAssertion(
    rp: RelyingParty,
    response: AuthenticationResponseJSON,
    challenge: string,
    stored: StoredCredential,
  ): Promise<AssertionOutcome> {
    const handle = response.response.userHandle;
    if (handle && handle !== stored.userHandle) return { ok: false, cloned: false };
    const { verifyAuthenticationResponse, isoBase64URL } = await webAuthn();
    try {
      const verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        credential: {
          id: stored.credentialId,
          publicKey: isoBase64URL.toBuffer(stored.publicKey),
          counter: 0, // see above: compared below, once the signature holds
        },
        requireUserVerification: true,
      });
      if (!verified.verified) return { ok: false, cloned: false };
      const counter = verified.authenticationInfo.newCounter;
      // Authenticators without a counter (synced passkeys) always send 0: nothing to compare.
      if ((counter > 0 || stored.counter > 0) && counter <= stored.counter)
        return { ok: false, cloned: true };
      return { ok: true, counter };
    } catch {
      return { ok: false, cloned: false };
    }
  }

  /** Keeps `options`' challenge as the browser's one mark of `scope`, or says how long until there is room. */
  private async keep<T extends { challenge: string }>(
    scope: string,
    binding: string,
    options: T,
  ): Promise<Issued<T>> {
    const wait = await this.marks.putOnce(
      scope,
      digest(binding),
      digest(options.challenge),
      PASSKEY_CHALLENGE_TTL_MS,
    );
    return wait === 0 ? { options } : { retryAfterMs: wait };
  }

  private async take(scope: string, binding: string, challenge: string): Promise<boolean> {
    return (
      challenge.length > 0 &&
      challenge.length <= 128 &&
      (await this.marks.takeOnce(scope, digest(binding), digest(challenge)))
    );
  }
}
