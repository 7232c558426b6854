// JSON schemas of the WebAuthn JSON forms the passkey routes take and answer (docs/rules.md#passkeys).
import { PASSKEY_NAME_MAX } from '../limits.ts';

/** base64url without padding, as a browser's toJSON() writes every binary field. */
const base64url = (maxLength: number, description: string) =>
  ({ type: 'string', pattern: '^[A-Za-z0-9_-]*$', minLength: 1, maxLength, description }) as const;

/** A credential id: at most 1,023 bytes (WebAuthn), 1,364 characters of base64url. */
const credentialId = base64url(1364, 'The credential id, base64url.');

/**
 * A credential answer: what every one shares, and the fields of its `response`. Browsers add
 * fields of their own, which are kept and ignored; SimpleWebAuthn checks what it reads.
 */
function credentialAnswer<const R extends Record<string, unknown>>(
  required: readonly (keyof R & string)[],
  response: R,
) {
  return {
    type: 'object',
    required: ['id', 'rawId', 'type', 'response', 'clientExtensionResults'],
    additionalProperties: true,
    properties: {
      id: credentialId,
      rawId: credentialId,
      type: { type: 'string', enum: ['public-key'] },
      authenticatorAttachment: { type: 'string', maxLength: 32 },
      clientExtensionResults: { type: 'object' },
      response: { type: 'object', required, additionalProperties: true, properties: response },
    },
  } as const;
}

/** RegistrationResponseJSON: what `navigator.credentials.create()` answers, as toJSON() writes it. */
export const registrationResponseSchema = credentialAnswer(['clientDataJSON', 'attestationObject'], {
  clientDataJSON: base64url(8192, 'The client data, base64url.'),
  attestationObject: base64url(32768, 'The attestation object (CBOR), base64url.'),
  transports: { type: 'array', maxItems: 8, items: { type: 'string', maxLength: 32 } },
});

/** AuthenticationResponseJSON: what `navigator.credentials.get()` answers, as toJSON() writes it. */
export const authenticationResponseSchema = credentialAnswer(
  ['clientDataJSON', 'authenticatorData', 'signature'],
  {
    clientDataJSON: base64url(8192, 'The client data, base64url.'),
    authenticatorData: base64url(8192, 'The authenticator data, base64url.'),
    signature: base64url(2048, 'The signature over the authenticator data and the client data hash.'),
    userHandle: base64url(128, 'The account handle the passkey was made for.'),
  },
);

/** A passkey's name: 1–64 characters, at least one of them not a space. */
export const passkeyNameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: PASSKEY_NAME_MAX,
  pattern: '\\S',
} as const;

export const passkeySchema = {
  type: 'object',
  required: ['id', 'name', 'createdAt', 'lastUsedAt'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/** PublicKeyCredentialCreationOptionsJSON, handed to the browser as it is. */
export const creationOptionsSchema = {
  type: 'object',
  required: ['rp', 'user', 'challenge', 'pubKeyCredParams'],
  additionalProperties: true,
  description:
    'PublicKeyCredentialCreationOptionsJSON (WebAuthn Level 3), for navigator.credentials.create().',
  properties: {
    rp: { type: 'object', additionalProperties: true },
    user: { type: 'object', additionalProperties: true },
    challenge: { type: 'string' },
    pubKeyCredParams: { type: 'array', items: { type: 'object', additionalProperties: true } },
  },
} as const;

/** PublicKeyCredentialRequestOptionsJSON, handed to the browser as it is. */
export const requestOptionsSchema = {
  type: 'object',
  required: ['challenge', 'rpId'],
  additionalProperties: true,
  description:
    'PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3), for navigator.credentials.get(); no allowCredentials.',
  properties: {
    challenge: { type: 'string' },
    rpId: { type: 'string' },
  },
} as const;
