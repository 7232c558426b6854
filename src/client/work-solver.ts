// The proved-work solver (docs/rules.md#proved-work): a nonce for a LOGIN_BUSY challenge, browser or Node.
import { sha256 } from '@noble/hashes/sha2.js';

// What the server judges a solution by is the server's own module, which imports nothing.
import { leadingZeroBits, WORK_BITS_MAX, workMessage } from '../login/proved-work.ts';

export { leadingZeroBits, WORK_BITS_MAX, workMessage };

/** What a LOGIN_BUSY under pressure asks for: a nonce whose hash with `challenge` starts with `bits` zero bits. */
export interface WorkAsked {
  readonly challenge: string;
  readonly bits: number;
}

/** A found nonce, and how many hashes it took (for the page's and the bench's figures). */
export interface WorkFound {
  readonly nonce: string;
  readonly hashes: number;
}

/** Solves a challenge; the typed client's default runs `searchNonce` in slices on this thread. */
export type WorkSolver = (asked: WorkAsked, signal?: AbortSignal) => Promise<WorkFound>;

/**
 * Tries the nonces `from`, `from + 1`, … (base 36) for at most `count` hashes; the first that
 * proves `bits` zero bits, or null with the next number to try. The challenge's hash state is made
 * once and copied per nonce, and the nonce is written into one buffer: @noble/hashes' SHA-256 this
 * way runs about as fast as node:crypto called per hash (measured: BENCHMARKS.md),
 * where crypto.subtle.digest, a promise per hash, is an order of magnitude slower.
 */
export function searchNonce(
  { challenge, bits }: WorkAsked,
  from: number,
  count: number,
): { found: string | null; next: number } {
  const prefix = sha256.create().update(new TextEncoder().encode(workMessage(challenge, '')));
  const hash = sha256.create();
  const digest = new Uint8Array(32);
  const nonce = new Uint8Array(16);
  const end = from + count;
  for (let n = from; n < end; n++) {
    const text = n.toString(36);
    for (let i = 0; i < text.length; i++) nonce[i] = text.charCodeAt(i);
    prefix._cloneInto(hash);
    hash.update(nonce.subarray(0, text.length));
    hash.digestInto(digest);
    if (leadingZeroBits(digest) >= bits) return { found: text, next: n + 1 };
  }
  return { found: null, next: end };
}

/** Hashes per slice of the default solver: a few tens of ms, then other work of the thread may run. */
const SLICE = 16_384;

/** Solves on this thread in slices, yielding between them; rejects with the signal's reason when aborted. */
export const solveInSlices: WorkSolver = async (asked, signal) => {
  let next = 0;
  for (;;) {
    signal?.throwIfAborted();
    const slice = searchNonce(asked, next, SLICE);
    if (slice.found !== null) return { nonce: slice.found, hashes: slice.next };
    next = slice.next;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
};
