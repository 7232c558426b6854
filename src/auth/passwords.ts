// Slow salted password hashes (scrypt) and a verifier whose timing does not reveal unknown accounts.
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

function optionsFor(log2N: number, r: number, p: number): ScryptOptions {
  // scrypt needs 128·N·r bytes; allow that plus headroom (Node's default cap is 32 MiB).
  return { N: 2 ** log2N, r, p, maxmem: 128 * 2 ** log2N * r * p + 16 * 1024 * 1024 };
}

/** Hashes as `scrypt$<log2N>$<r>$<p>$<salt>$<key>` (base64url), so the cost can rise later. */
export async function hashPassword(password: string, log2N: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, optionsFor(log2N, 8, 1));
  return ['scrypt', log2N, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, log2N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(
    password,
    Buffer.from(salt, 'base64url'),
    optionsFor(Number(log2N), Number(r), Number(p)),
  );
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made at another cost than `log2N` (and should be redone at login). */
export function needsRehash(stored: string, log2N: number): boolean {
  const [scheme, cost] = stored.split('$');
  return scheme !== 'scrypt' || Number(cost) !== log2N;
}

/**
 * Checks a password against the account's hash, or against a dummy hash of the same cost when
 * there is no account, so that an unknown email takes as long as a wrong password.
 */
export class PasswordChecker {
  private readonly dummyHash: string;

  private constructor(dummyHash: string) {
    this.dummyHash = dummyHash;
  }

  static async create(log2N: number): Promise<PasswordChecker> {
    return new PasswordChecker(await hashPassword(randomBytes(16).toString('hex'), log2N));
  }

  async check(password: string, storedHash: string | null): Promise<boolean> {
    const matches = await verifyPassword(password, storedHash ?? this.dummyHash);
    return storedHash !== null && matches;
  }
}
