// The proved-work scenario's attackers (bench/flood-proved-work.ts), in a process of their own: new addresses and accounts, solving every challenge or none.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { leadingZeroBits, workMessage } from '../src/login/proved-work.ts';
import { type Answer, Browser, outcome, tally } from './flood.ts';

interface Asked {
  readonly challenge: string;
  readonly bits: number;
}

/** The challenge a LOGIN_BUSY carries, or null. */
export const workOf = (answer: Answer): Asked | null => {
  if (answer.status !== 503) return null;
  try {
    return (JSON.parse(answer.body) as { work?: Asked }).work ?? null;
  } catch {
    return null;
  }
};

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
  /** The bits asked, the last and the most seen. */
  readonly lastBits: number;
  readonly maxBits: number;
}

/** The attackers: `concurrency` in flight, each a new address and account; with `solve`, every challenge solved and sent back. */
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
  const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  const attacker = async () => {
    const browser = new Browser(port);
    await browser.csrf({ 'x-forwarded-for': address(next++) });
    while (performance.now() < end) {
      const n = next++;
      const account = `user${n}@flood.example`;
      let more: Record<string, unknown> = {};
      for (let round = 0; round < 3 && performance.now() < end; round++) {
        let answer: Answer;
        try {
          answer = await browser.login(account, `guess-${n}`, { 'x-forwarded-for': address(n) }, more);
        } catch {
          break;
        }
        attempts++;
        tally(byStatus, outcome(answer));
        if (answer.status === 401) admitted++;
        const asked = workOf(answer);
        if (!asked) break;
        lastBits = asked.bits;
        maxBits = Math.max(maxBits, asked.bits);
        if (!solve) break;
        let nonce = 0;
        // The attacker's own loop: node:crypto per hash, a yield every 4,096 so the others go on.
        for (;;) {
          const digest = createHash('sha256')
            .update(workMessage(asked.challenge, String(nonce)))
            .digest();
          hashes++;
          if (leadingZeroBits(digest) >= asked.bits) break;
          if (++nonce % 4096 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        solved++;
        more = { work: { challenge: asked.challenge, nonce: String(nonce) } };
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, attacker));
  return { attempts, byStatus, admitted, hashes, hashesPerCoreSecond, solved, lastBits, maxBits };
}

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
}
