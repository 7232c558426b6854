// WebAuthn ceremonies (contract §14) on SimpleWebAuthn: options with single-use challenges, registration and sign-in checks.
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { decodeClientDataJSON, isoBase64URL } from '@simplewebauthn/server/helpers';
import type { StoredCredential } from '../db/repositories/passkeys.ts';
import type { User } from '../db/repositories/users.ts';
import { digest } from './tokens.ts';

/** How long a challenge works, from the options that carry it (contract §14). */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** Registering asks for a sign-in at most this long ago (contract §14). */
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
 * marks (src/rate-limit/stores/store.ts), shared by the fleet. Declared here by shape, since this
 * layer imports nothing of the rate limiter.
 */
export interface ChallengeMarks {
  putOnce(scope: string, key: string, ttlMs: number): unknown;
  takeOnce(scope: string, key: string): boolean | Promise<boolean>;
}

/** The service's own origin (contract §3) and the RP ID it implies: its host, without port. */
export interface RelyingParty {
  readonly origin: string;
  readonly rpId: string;
}

export function relyingParty(origin: string): RelyingParty {
  const url = new URL(origin);
  return { origin: url.origin, rpId: url.hostname };
}

/** The browser's answers, as its toJSON() sends them; SimpleWebAuthn checks every field. */
export type { AuthenticationResponseJSON, RegistrationResponseJSON };

export type AssertionOutcome =
  | { readonly ok: true; readonly counter: number }
  /** `cloned`: the signature holds but the counter did not move forward (contract §14). */
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
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
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
    await this.marks.putOnce('passkey-create', markKey(binding, options.challenge), PASSKEY_CHALLENGE_TTL_MS);
    return options;
  }

  /**
   * The credential a registration answer proves, or null when it does not verify: a challenge
   * that is not this session's, used or expired, another origin or RP ID, no user verification.
   */
  async verifyRegistration(rp: RelyingParty, response: RegistrationResponseJSON, binding: string) {
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

  /** Request options for a sign-in: a fresh challenge bound to `binding`, no allowCredentials. */
  async signInOptions(rp: RelyingParty, binding: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const options = await generateAuthenticationOptions({
      rpID: rp.rpId,
      userVerification: 'required',
      timeout: PASSKEY_CHALLENGE_TTL_MS,
    });
    await this.marks.putOnce('passkey-get', markKey(binding, options.challenge), PASSKEY_CHALLENGE_TTL_MS);
    return options;
  }

  /**
   * Takes the sign-in challenge the answer carries, whatever comes next: a challenge works once,
   * even for an answer that then fails. The challenge, or null when it was not this browser's,
   * used or expired, or the answer is malformed.
   */
  async takeSignInChallenge(response: AuthenticationResponseJSON, binding: string): Promise<string | null> {
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

  private async take(scope: string, binding: string, challenge: string): Promise<boolean> {
    return (
      challenge.length > 0 &&
      challenge.length <= 128 &&
      (await this.marks.takeOnce(scope, markKey(binding, challenge)))
    );
  }
}

/** A challenge's mark: its digest with the browser's binding, so another browser's take finds nothing. */
function markKey(binding: string, challenge: string): string {
  return digest(`${binding}\0${challenge}`);
}
