// The proved-work scenario's attackers (proved-work.ts), in a process of their own, solving all or none.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { leadingZeroBits, type WorkSolver, workMessage } from '../../src/client/index.ts';
import { type Answer, address, Browser, outcome, tally } from './kit.ts';

/** What the attackers' process reports. */
export interface AttackWork {
  readonly attempts: number;
  readonly byStatus: Record<string, number>;
  /** Attempts that got a password check (401). */
  readonly admitted: number;
  readonly hashes: number;
  /** The same loop's hashes a second on one core, measured alone before the flood (0 without `solve`). */
  readonly hashesPerCoreSecond: number;
  readonly solved: number;
  /** The effort of the challenges met (as the client solves them: the asked bits, one more after a further LOGIN_BUSY), the last and the most. */
  readonly lastBits: number;
  readonly maxBits: number;
}

/** Sign-ins of one account: the first and at most this many more with a solution (3 in all). */
const SOLVED_ROUNDS = 2;

/**
 * The attackers: `concurrency` in flight, each a new address and account. With `solve`, every
 * challenge is solved (the attackers' own loop, below) and sent back through the client, as the
 * portal's client does, at most SOLVED_ROUNDS times an account.
 */
async function attack(
  port: number,
  concurrency: number,
  durationMs: number,
  solve: boolean,
): Promise<AttackWork> {
  const byStatus: Record<string, number> = {};
  let [attempts, admitted, hashes, solved, lastBits, maxBits, next] = [0, 0, 0, 0, 0, 0, 0];
  // The wall time of 1,024 interleaved solvers says nothing about a core's speed: measured alone.
  const hashesPerCoreSecond = solve ? calibrate() : 0;
  const end = performance.now() + durationMs;
  const count = (answer: Answer) => {
    attempts++;
    tally(byStatus, outcome(answer));
    if (answer.status === 401) admitted++;
  };
  const attacker = async () => {
    const browser = new Browser(port);
    browser.forwardedFor = address(next++);
    await browser.csrf();
    while (performance.now() < end) {
      const n = next++;
      browser.forwardedFor = address(n);
      let rounds = 0;
      // Each LOGIN_BUSY that asks for work is counted here, as the client is about to solve it.
      const solver: WorkSolver = async (asked) => {
        count({ status: 503, code: 'LOGIN_BUSY', retryAfter: browser.retryAfter, work: asked });
        lastBits = asked.bits;
        maxBits = Math.max(maxBits, asked.bits);
        if (!solve || rounds++ >= SOLVED_ROUNDS || performance.now() >= end) throw new GaveUp();
        const nonce = await search(asked.challenge, asked.bits);
        solved++;
        return { nonce: String(nonce), hashes: nonce + 1 };
      };
      try {
        count(await browser.login(`user${n}@flood.example`, `guess-${n}`, solver));
      } catch {
        // GaveUp (that LOGIN_BUSY is counted already), or a transport error: the next account
      }
    }
  };
  /** The attacker's own loop: node:crypto per hash, a yield every 4,096 so the others go on. */
  const search = async (challenge: string, bits: number): Promise<number> => {
    for (let nonce = 0; ; nonce++) {
      const digest = createHash('sha256')
        .update(workMessage(challenge, String(nonce)))
        .digest();
      hashes++;
      if (leadingZeroBits(digest) >= bits) return nonce;
      if ((nonce + 1) % 4096 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, attacker));
  return { attempts, byStatus, admitted, hashes, hashesPerCoreSecond, solved, lastBits, maxBits };
}

class GaveUp extends Error {}

/** Hashes a second of the attackers' loop on one core: one second of it, nothing else running here. */
function calibrate(): number {
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < 1000) {
    for (let i = 0; i < 1000; i++, n++) {
      leadingZeroBits(
        createHash('sha256')
          .update(workMessage('calibration', String(n)))
          .digest(),
      );
    }
  }
  return (n * 1000) / (performance.now() - t0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [port, concurrency, durationMs, solve] = process.argv.slice(2).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  console.log(JSON.stringify(await attack(port, concurrency, durationMs, solve === 1)));
  process.exit(0); // idle keep-alive connections would hold the process open
}
