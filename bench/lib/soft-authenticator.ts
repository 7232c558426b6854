// A software passkey authenticator: an ES256 key, attestation none, answers as a browser's toJSON() writes.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/** Authenticator data flags (WebAuthn §6.1): user present, user verified, attested credential data. */
export const FLAGS = { UP: 0x01, UV: 0x04, AT: 0x40 } as const;

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>;

/** The few CBOR shapes an attestation object needs (RFC 8949): integers, strings, bytes, maps. */
function cbor(value: Cbor): Buffer {
  const head = (major: number, length: number): Buffer => {
    if (length < 24) return Buffer.from([(major << 5) | length]);
    if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
    const buffer = Buffer.alloc(3);
    buffer[0] = (major << 5) | 25;
    buffer.writeUInt16BE(length, 1);
    return buffer;
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, text.length), text]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

/** Creation options as the server sends them (the part the authenticator reads). */
export interface CreationOptions {
  readonly challenge: string;
  readonly rp: { readonly id?: string; readonly name: string };
  readonly user: { readonly id: string; readonly name: string };
}

/** One credential the authenticator holds: what it needs to sign, and a counter it can be told to send. */
export interface HeldCredential {
  readonly id: string;
  readonly rpId: string;
  /** The user handle (base64url) the credential was made for. */
  readonly userHandle: string;
  readonly privateKey: KeyObject;
  /** The counter the next assertion sends (then incremented), unless the call says otherwise. */
  counter: number;
}

export class SoftAuthenticator {
  readonly credentials: HeldCredential[] = [];
  private readonly origin: string;

  /** `origin` is what the "browser" puts in clientDataJSON: the page's origin. */
  constructor(origin = 'http://localhost') {
    this.origin = origin;
  }

  /** navigator.credentials.create() answered, as RegistrationResponseJSON; the credential is kept. */
  create(options: CreationOptions, settings: { flags?: number; origin?: string; counter?: number } = {}) {
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const coseKey = cbor(
      new Map<Cbor, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const credentialId = randomBytes(16);
    const counter = settings.counter ?? 0;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      this.authDataHead(rpId, settings.flags ?? FLAGS.UP | FLAGS.UV | FLAGS.AT, counter),
      Buffer.alloc(16), // AAGUID: none
      idLength,
      credentialId,
      coseKey,
    ]);
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const id = b64url(credentialId);
    this.credentials.push({ id, rpId, userHandle: options.user.id, privateKey, counter: counter + 1 });
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge, settings.origin),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  /**
   * navigator.credentials.get() answered with a held credential (the first, unless named), as
   * AuthenticationResponseJSON. `counter` overrides the one it would send; `tamper` flips a bit of
   * the signature.
   */
  get(
    options: { readonly challenge: string; readonly rpId?: string },
    settings: {
      credential?: HeldCredential;
      counter?: number;
      flags?: number;
      origin?: string;
      tamper?: boolean;
    } = {},
  ) {
    const credential = settings.credential ?? this.credentials[0];
    if (!credential) throw new Error('the authenticator holds no credential');
    const counter = settings.counter ?? credential.counter++;
    const authData = this.authDataHead(
      options.rpId ?? credential.rpId,
      settings.flags ?? FLAGS.UP | FLAGS.UV,
      counter,
    );
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, settings.origin);
    const signature = sign(
      'sha256',
      Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, 'base64url'))]),
      credential.privateKey,
    );
    if (settings.tamper) signature.writeUInt8(signature.at(-1)! ^ 0x01, signature.length - 1);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON,
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  private authDataHead(rpId: string, flags: number, counter: number): Buffer {
    const counterBytes = Buffer.alloc(4);
    counterBytes.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), counterBytes]);
  }

  private clientData(type: string, challenge: string, origin = this.origin): string {
    return b64url(Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false })));
  }
}
