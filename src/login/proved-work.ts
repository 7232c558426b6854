// Proved work at login (docs/rules.md#proved-work): what the server, the client and the page share.

/** A solution's nonce is at most this many characters (a longer one is a 400). */
export const WORK_NONCE_MAX_LENGTH = 32;

/**
 * The most bits that count: the lane orders attempts up to here, and a client solves no more (2^32
 * hashes is an hour of a browser; a server asking more is refusing).
 */
export const WORK_BITS_MAX = 32;

/** A challenge is valid this long after it was issued. */
export const WORK_CHALLENGE_TTL_MS = 2 * 60_000;

/** The text whose SHA-256 a solution is judged by: the challenge, a colon, the nonce (UTF-8). */
export function workMessage(challenge: string, nonce: string): string {
  return `${challenge}:${nonce}`;
}

/** How many zero bits a digest starts with: the work it proves (2^bits hashes expected to find one). */
export function leadingZeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}
