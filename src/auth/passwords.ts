// Slow salted password hashes (argon2id; older scrypt hashes still verify) and a timing-blind verifier.
import { argon2, createHmac, randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import type { StoredHashCount } from '../db/repositories/users.ts';

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** OWASP's argon2id minimum pairs 19 MiB with two passes; the memory is configurable, the rest is not. */
const PASSES = 2;
const PARALLELISM = 1;

/** Passwords are compared in one Unicode form, so the same password typed on two keyboards matches. */
const normalise = (password: string) => password.normalize('NFKC');

function deriveArgon2(
  password: string,
  salt: Buffer,
  memoryKiB: number,
  passes: number,
  parallelism: number,
) {
  return new Promise<Buffer>((resolve, reject) =>
    argon2(
      'argon2id',
      {
        message: normalise(password),
        nonce: salt,
        memory: memoryKiB,
        passes,
        parallelism,
        tagLength: KEY_LENGTH,
      },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

function deriveScrypt(password: string, salt: Buffer, log2N: number, r: number, p: number): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; allow that plus headroom (Node's default cap is 32 MiB).
  const options: ScryptOptions = { N: 2 ** log2N, r, p, maxmem: 128 * 2 ** log2N * r * p + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(normalise(password), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** Hashes as a PHC string, `$argon2id$v=19$m=<KiB>,t=2,p=1$<salt>$<key>` (unpadded base64). */
export async function hashPassword(password: string, memoryKiB: number): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await deriveArgon2(password, salt, memoryKiB, PASSES, PARALLELISM);
  return `$argon2id$v=19$m=${memoryKiB},t=${PASSES},p=${PARALLELISM}$${b64(salt)}$${b64(key)}`;
}

/** Checks a password against an argon2id hash, or a legacy `scrypt$<log2N>$<r>$<p>$<salt>$<key>` one. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual =
    parsed.scheme === 'argon2id'
      ? await deriveArgon2(password, parsed.salt, parsed.memoryKiB, parsed.passes, parsed.parallelism)
      : await deriveScrypt(password, parsed.salt, parsed.log2N, parsed.r, parsed.p);
  return actual.length === parsed.key.length && timingSafeEqual(actual, parsed.key);
}

/** Whether a stored hash is not argon2id at today's parameters (and should be redone at login). */
export function needsRehash(stored: string, memoryKiB: number): boolean {
  const parsed = parseHash(stored);
  return (
    parsed?.scheme !== 'argon2id' ||
    parsed.memoryKiB !== memoryKiB ||
    parsed.passes !== PASSES ||
    parsed.parallelism !== PARALLELISM
  );
}

type ParsedHash =
  | { scheme: 'argon2id'; memoryKiB: number; passes: number; parallelism: number; salt: Buffer; key: Buffer }
  | { scheme: 'scrypt'; log2N: number; r: number; p: number; salt: Buffer; key: Buffer };

const ARGON2ID =
  /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;
const SCRYPT = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([\w-]+)\$([\w-]+)$/;

function parseHash(stored: string): ParsedHash | null {
  const argon = ARGON2ID.exec(stored);
  if (argon) {
    const [, m, t, p, salt, key] = argon;
    // Out of argon2's range (m ≥ 8·p, t ≥ 1, p ≥ 1): a hash that cannot verify, not a thrown error.
    if (Number(t) < 1 || Number(p) < 1 || Number(m) < 8 * Number(p)) return null;
    return {
      scheme: 'argon2id',
      memoryKiB: Number(m),
      passes: Number(t),
      parallelism: Number(p),
      salt: Buffer.from(salt!, 'base64'),
      key: Buffer.from(key!, 'base64'),
    };
  }
  const legacy = SCRYPT.exec(stored);
  if (!legacy) return null;
  const [, log2N, r, p, salt, key] = legacy;
  if (Number(log2N) < 1 || Number(log2N) > 24 || Number(r) < 1 || Number(p) < 1) return null;
  return {
    scheme: 'scrypt',
    log2N: Number(log2N),
    r: Number(r),
    p: Number(p),
    salt: Buffer.from(salt!, 'base64url'),
    key: Buffer.from(key!, 'base64url'),
  };
}

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/** A stored hash without its salt and key: the scheme and cost it was made at (`$argon2id$v=19$m=…,t=2,p=1`, `scrypt$15$8$1`). */
export function hashParameters(stored: string): string {
  return stored.replace(/\$[^$]*\$[^$]*$/, '');
}

/** A hash of a random password at `parameters` (as hashParameters gives them), or null if they do not parse. */
async function hashAt(parameters: string): Promise<string | null> {
  const salt = randomBytes(SALT_LENGTH);
  const password = randomBytes(16).toString('hex');
  const parsed = parseHash(`${parameters}$AAAA$AAAA`); // the cost alone: salt and key are placeholders
  if (!parsed) return null;
  if (parsed.scheme === 'argon2id') {
    const key = await deriveArgon2(password, salt, parsed.memoryKiB, parsed.passes, parsed.parallelism);
    return `${parameters}$${b64(salt)}$${b64(key)}`;
  }
  const key = await deriveScrypt(password, salt, parsed.log2N, parsed.r, parsed.p);
  return `${parameters}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** What computes hashes: argon2id on libuv's pool in the service; tests pass one they can hold and release. */
export interface PasswordHasher {
  verify(password: string, stored: string): Promise<boolean>;
  hash(password: string, memoryKiB: number): Promise<string>;
}

export const argon2Hasher: PasswordHasher = { verify: verifyPassword, hash: hashPassword };

/**
 * Checks a password against the account's hash, or, when there is no account, against a dummy hash
 * at one of the costs stored, so that an unknown email takes as long as a wrong password would for
 * some account. After a cost change, dormant accounts keep their old hash until they sign in: a
 * dummy at today's cost alone would tell them from unknown emails. So each cost stored gets a
 * dummy, and an unknown email is checked at one of them, chosen by a keyed hash of the email in
 * proportion to the accounts at each cost: the same email always takes the same time, and the
 * share of unknown emails at each cost is the share of accounts.
 */
export class PasswordChecker {
  private readonly dummyHash: string;
  /** Dummies at the costs stored, with their accounts (cumulative), once `useStoredCosts` ran. */
  private dummies: { readonly hash: string; readonly upTo: number }[] = [];
  private dummyKey: Buffer = randomBytes(32);
  private readonly hasher: PasswordHasher;
  private readonly memoryKiB: number;
  /** How long (ms, by the clock given to create) making the dummy hash took: a first measure of one check. */
  readonly bootCheckMs: number;

  private constructor(dummyHash: string, hasher: PasswordHasher, memoryKiB: number, bootCheckMs: number) {
    this.dummyHash = dummyHash;
    this.hasher = hasher;
    this.memoryKiB = memoryKiB;
    this.bootCheckMs = bootCheckMs;
  }

  static async create(
    memoryKiB: number,
    hasher: PasswordHasher = argon2Hasher,
    now: () => number = Date.now,
  ): Promise<PasswordChecker> {
    const started = now();
    const dummy = await hasher.hash(randomBytes(16).toString('hex'), memoryKiB);
    return new PasswordChecker(dummy, hasher, memoryKiB, Math.max(0, now() - started));
  }

  /**
   * Makes a dummy hash at each cost in `counts` (today's reuses the boot's), and chooses among them
   * with `key` (derived from SESSION_SECRET: every instance chooses alike). Run before serving.
   */
  async useStoredCosts(counts: readonly StoredHashCount[], key: Buffer): Promise<void> {
    const today = hashParameters(this.dummyHash);
    const dummies: { hash: string; upTo: number }[] = [];
    let total = 0;
    for (const { parameters, accounts } of counts) {
      const hash = parameters === today ? this.dummyHash : await hashAt(parameters);
      if (hash === null || accounts <= 0) continue; // a hash no check can parse costs nothing to check
      total += accounts;
      dummies.push({ hash, upTo: total });
    }
    this.dummies = dummies;
    this.dummyKey = key;
  }

  /** The dummy an unknown `email` is checked against: by the keyed hash of its normal form. */
  private dummyFor(email: string): string {
    const total = this.dummies.at(-1)?.upTo ?? 0;
    if (total === 0) return this.dummyHash;
    const mac = createHmac('sha256', this.dummyKey).update(email).digest();
    const pick = mac.readUIntBE(0, 6) % total;
    return this.dummies.find((dummy) => pick < dummy.upTo)!.hash;
  }

  /** `email` (normalised) chooses the dummy when there is no stored hash. */
  async check(password: string, storedHash: string | null, email = ''): Promise<boolean> {
    const matches = await this.hasher.verify(password, storedHash ?? this.dummyFor(email));
    return storedHash !== null && matches;
  }

  /** Whether a stored hash is not at today's parameters (and should be redone at login). */
  needsRehash(storedHash: string): boolean {
    return needsRehash(storedHash, this.memoryKiB);
  }

  /** A new hash of the password at today's parameters. */
  rehash(password: string): Promise<string> {
    return this.hasher.hash(password, this.memoryKiB);
  }
}
