// Proved work for the tests: solutions of a chosen strength, and a flood of weak ones.
import { createHash } from 'node:crypto';
import type { WorkChallenges } from '../../src/auth/work-challenges.ts';
import { leadingZeroBits, workMessage } from '../../src/proved-work.ts';

/** More solutions than the 100,000 claims the record once held before it refused every new one. */
export const FLOOD = 100_001;

/** A nonce whose hash starts with at least `least` and at most `most` zero bits. */
export function solveBetween(challenge: string, least: number, most: number): string {
  for (let n = 0; ; n++) {
    const nonce = n.toString(36);
    const proved = leadingZeroBits(createHash('sha256').update(workMessage(challenge, nonce)).digest());
    if (proved >= least && proved <= most) return nonce;
  }
}

/**
 * An attacker's `count` challenges (one per shed attempt, each for an email of its own), each
 * solved with one bit (about two hashes) and sent while one bit is what is asked: all of them
 * count, and all are recorded. Sent in batches, as a flood's attempts arrive together.
 */
export async function floodOfOneBitSolutions(challenges: WorkChallenges, count: number): Promise<void> {
  for (let start = 0; start < count; start += 1000) {
    const batch: Promise<number>[] = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const email = `user${i}@flood.example`;
      const challenge = challenges.issue(email);
      batch.push(challenges.prove(email, { challenge, nonce: solveBetween(challenge, 1, 256) }, 1));
    }
    await Promise.all(batch);
  }
}
