// The flood's passkey scenario (contract §14): the owner signs in with her passkey from a new browser every second.
// bench/passkey-quiet.ts measures the same sign-in without a flood.
import { SoftAuthenticator } from '../test/helpers/authenticator.ts';
import {
  type Answer,
  Browser,
  type FloodCompanion,
  type OwnerFigures,
  outcome,
  percentiles,
} from './flood.ts';

const OWNER = 'alice@example.com';
const PASSWORD = 'demo-password';

/** The owner's passkey, registered on a signed-in browser; the authenticator keeps it. */
export async function ownersPasskey(port: number): Promise<SoftAuthenticator> {
  const authenticator = new SoftAuthenticator(`http://127.0.0.1:${port}`);
  const browser = new Browser(port);
  await browser.csrf();
  if ((await browser.login(OWNER, PASSWORD)).status !== 200) throw new Error('the owner could not sign in');
  const options = await browser.post('/api/auth/passkeys/registration-options');
  const response = authenticator.create(JSON.parse(options.body));
  const created = await browser.post('/api/auth/passkeys', { name: 'Bench', response });
  if (created.status !== 201)
    throw new Error(`the passkey was not registered: ${created.status} ${created.body}`);
  return authenticator;
}

/** Sign-ins from new browsers so far: each comes from an address of its own. */
let browsers = 0;

/**
 * A new browser (its CSRF token fetched untimed), then options and sign-in: what is timed. Each
 * new browser is on a network of its own (a new phone, a hotel), so the options' budget per
 * address (`passkey-options`) is not what a bench of thousands of sign-ins measures.
 */
export async function signInFromNewBrowser(port: number, authenticator: SoftAuthenticator) {
  const n = browsers++;
  const browser = new Browser(port, `172.16.${(n >> 8) & 255}.${n & 255}`);
  await browser.csrf();
  const t0 = performance.now();
  const options = await browser.post('/api/auth/passkey/options');
  if (options.status !== 200) return { answer: options, ms: performance.now() - t0, loginMs: 0 };
  const response = authenticator.get(JSON.parse(options.body));
  const t1 = performance.now();
  const answer: Answer = await browser.post('/api/auth/passkey/login', { response });
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
        byStatus[outcome(answer)] = (byStatus[outcome(answer)] ?? 0) + 1;
      } catch {
        byStatus['no answer'] = (byStatus['no answer'] ?? 0) + 1;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
    return { requests: latencies.length, byStatus, latencyMs: percentiles(latencies) };
  },
};
