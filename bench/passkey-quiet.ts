// npm run bench:passkeys: passkey sign-ins without a flood (contract §14's quiet targets) against `npm start`.
//
// PASSKEY_SIGN_INS (default 10,000) sign-ins one after another, each from a fresh browser: the p95
// of the sign-in request alone (on loopback with keep-alive, about the server's time) and of
// options + sign-in, and the server's RSS after PASSKEY_WARM_UP (10,000) sign-ins, every 500 and at the end;
// the RSS target is judged on the trend over those samples. FLOOD_SERVER_DIR and
// FLOOD_ENV choose the server as for bench:flood.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { floodSettings, outcome, percentiles, startQuietServer } from './flood.ts';
import { ownersPasskey, signInFromNewBrowser } from './flood-passkey.ts';

/** The quiet measurement: sign-ins one after another, the sign-in request's p95 and the RSS growth. */
async function quiet(): Promise<void> {
  const count = Number(process.env.PASSKEY_SIGN_INS ?? 10_000);
  const server = await startQuietServer(floodSettings());
  try {
    const keys = await ownersPasskey(server.port);
    const rss = () =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1]) / 1024;
    // The warm-up brings V8's heap to the size it keeps under this load: it grows its generations
    // over the first thousands of requests (a forced full collection finds the live heap flat from
    // the 500th sign-in on), and that growth is no leak.
    const warmUp = Number(process.env.PASSKEY_WARM_UP ?? 10_000);
    for (let i = 0; i < warmUp; i++) await signInFromNewBrowser(server.port, keys);
    const before = rss();
    const samples: number[] = [];
    const login: number[] = [];
    const both: number[] = [];
    const byStatus: Record<string, number> = {};
    for (let i = 0; i < count; i++) {
      const { answer, ms, loginMs } = await signInFromNewBrowser(server.port, keys);
      byStatus[outcome(answer)] = (byStatus[outcome(answer)] ?? 0) + 1;
      login.push(loginMs);
      both.push(ms);
      if ((i + 1) % 500 === 0) samples.push(rss());
    }
    const after = rss();
    console.log(
      JSON.stringify(
        {
          signIns: count,
          warmUp,
          loadAverage: loadavg()[0],
          byStatus,
          loginMs: percentiles(login),
          optionsAndLoginMs: percentiles(both),
          rssMb: {
            before: Math.round(before),
            after: Math.round(after),
            // V8 lets garbage build up between full collections: RSS swings by some 20 MB under
            // this load without a leak, so growth is the trend over every sample, not last − first.
            growthTrend: Math.round(trend(samples) * (count / 500) * 10) / 10,
            lowest: Math.round(Math.min(...samples)),
            highest: Math.round(Math.max(...samples)),
          },
          target: 'p95 of the sign-in ≤ 20 ms; RSS trend over the sign-ins ≤ 10 MB',
          held: percentiles(login).p95 <= 20 && trend(samples) * (count / 500) <= 10,
        },
        null,
        2,
      ),
    );
  } finally {
    await server.stop();
  }
}

/** The least-squares slope of `ys` against their index: growth per sample. */
function trend(ys: readonly number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  });
  return num / den;
}

await quiet();
