// The flood's passkey companion (docs/rules.md#passkeys): the owner signs in from a new browser each second.
// bench/passkey-quiet.ts measures the same sign-in without a flood.
import { type CreationOptions, SoftAuthenticator } from '../lib/soft-authenticator.ts';
import {
  ALICE,
  type Answer,
  Browser,
  type FloodCompanion,
  type OwnerFigures,
  outcome,
  PASSWORD,
  percentiles,
  tally,
} from './kit.ts';

/** The owner's passkey, registered on a signed-in browser; the authenticator keeps it. */
export async function ownersPasskey(port: number): Promise<SoftAuthenticator> {
  const authenticator = new SoftAuthenticator(`http://127.0.0.1:${port}`);
  const browser = new Browser(port);
  await browser.csrf();
  if ((await browser.login(ALICE, PASSWORD)).status !== 200) throw new Error('the owner could not sign in');
  const created = await browser.addPasskey('Bench', (options) =>
    authenticator.create(options as unknown as CreationOptions),
  );
  if (created.status !== 201) throw new Error(`the passkey was not registered: ${outcome(created)}`);
  return authenticator;
}

/** Sign-ins from new browsers so far: each comes from an address of its own. */
let browsers = 0;

/**
 * A new browser (its CSRF token fetched untimed), then options and sign-in: what is timed. Each
 * new browser is on a network of its own (a new phone, a hotel), so the options' budget per
 * address (`passkey-options`) is not what a bench of thousands of sign-ins measures.
 */
export async function signInFromNewBrowser(
  port: number,
  authenticator: SoftAuthenticator,
): Promise<{ answer: Answer; ms: number; loginMs: number }> {
  const n = browsers++;
  const browser = new Browser(port);
  browser.forwardedFor = `172.16.${(n >> 8) & 255}.${n & 255}`;
  await browser.csrf();
  const t0 = performance.now();
  const { answer: asked, options } = await browser.passkeyOptions();
  if (asked.status !== 200) return { answer: asked, ms: performance.now() - t0, loginMs: 0 };
  const response = authenticator.get(options as unknown as { challenge: string });
  const t1 = performance.now();
  const answer = await browser.passkeySignIn(response);
  const t2 = performance.now();
  return { answer, ms: t2 - t0, loginMs: t2 - t1 };
}

let authenticator: SoftAuthenticator | null = null;

export const passkeyCompanion: FloodCompanion = {
  name: 'owner, passkey, new browser every 1 s (options + sign-in)',
  async setUp(port) {
    authenticator = await ownersPasskey(port);
  },
  async during(port, running): Promise<OwnerFigures> {
    const latencies: number[] = [];
    const byStatus: Record<string, number> = {};
    await new Promise((resolve) => setTimeout(resolve, 1000)); // let the flood build first
    while (running()) {
      const next = performance.now() + 1000;
      try {
        const { answer, ms } = await signInFromNewBrowser(port, authenticator!);
        latencies.push(ms);
        tally(byStatus, outcome(answer));
      } catch {
        tally(byStatus, 'no answer');
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
    return { requests: latencies.length, byStatus, latencyMs: percentiles(latencies) };
  },
};
