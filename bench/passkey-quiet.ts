// npm run bench:passkeys: passkey sign-ins without a flood (contract §14's quiet targets) against `npm start`.
//
// PASSKEY_SIGN_INS (default 10,000) sign-ins one after another, each from a fresh browser: the p95
// of the sign-in request alone (on loopback with keep-alive, about the server's time) and of
// options + sign-in, and the server's RSS after a warm-up and at the end. FLOOD_SERVER_DIR and
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
    for (let i = 0; i < 200; i++) await signInFromNewBrowser(server.port, keys); // warm-up
    const before = rss();
    const login: number[] = [];
    const both: number[] = [];
    const byStatus: Record<string, number> = {};
    for (let i = 0; i < count; i++) {
      const { answer, ms, loginMs } = await signInFromNewBrowser(server.port, keys);
      byStatus[outcome(answer)] = (byStatus[outcome(answer)] ?? 0) + 1;
      login.push(loginMs);
      both.push(ms);
    }
    const after = rss();
    console.log(
      JSON.stringify(
        {
          signIns: count,
          loadAverage: loadavg()[0],
          byStatus,
          loginMs: percentiles(login),
          optionsAndLoginMs: percentiles(both),
          rssMb: { before: Math.round(before), after: Math.round(after), growth: Math.round(after - before) },
        },
        null,
        2,
      ),
    );
  } finally {
    await server.stop();
  }
}

await quiet();
