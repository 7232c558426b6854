// npm run bench:passkeys: passkey sign-ins without a flood (docs/rules.md#passkeys) against `npm start`.
//
// PASSKEY_SIGN_INS (default 10,000) sign-ins one after another, each from a fresh browser: the p95
// of the sign-in request alone (on loopback with keep-alive, about the server's time) and of
// options + sign-in, and the server's RSS after PASSKEY_WARM_UP (10,000) sign-ins, every 500 and at the end;
// the trend over those samples is reported: V8 lets garbage build up between full collections, and
// the server's RSS swings by some 20 MB under this load without a leak. The RSS target is judged in
// a second process (`node --expose-gc`, the app in process on a fresh embedded database): its RSS
// after forced full collections, after the warm-up and again after PASSKEY_SIGN_INS more.
// FLOOD_SERVER_DIR and FLOOD_ENV choose the server as for bench:flood.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { floodSettings } from './index.ts';
import { outcome, percentiles, startServer, tally } from './kit.ts';
import { ownersPasskey, signInFromNewBrowser } from './passkey.ts';

const RSS_TARGET_MB = 10;

/** The quiet measurement: sign-ins one after another, the sign-in request's p95 and the RSS growth. */
async function quiet(): Promise<void> {
  const count = Number(process.env.PASSKEY_SIGN_INS ?? 10_000);
  const server = await startServer(floodSettings());
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
      tally(byStatus, outcome(answer));
      login.push(loginMs);
      both.push(ms);
      if ((i + 1) % 500 === 0) samples.push(rss());
    }
    const after = rss();
    await server.stop();
    const settled = await rssAfterCollections(count);
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
          rssAfterFullCollectionsMb: settled,
          target: `p95 of the sign-in ≤ 20 ms; RSS after full collections grows ≤ ${RSS_TARGET_MB} MB over the sign-ins`,
          held: percentiles(login).p95 <= 20 && settled.growth <= RSS_TARGET_MB,
        },
        null,
        2,
      ),
    );
  } finally {
    await server.stop();
  }
}

/** The in-process measurement, in a child with `--expose-gc`: its JSON answer. */
async function rssAfterCollections(
  count: number,
): Promise<{ before: number; after: number; growth: number }> {
  const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'settled'], {
    env: { ...process.env, PASSKEY_SIGN_INS: String(count) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the in-process measurement exited with ${code}`);
  return JSON.parse(out);
}

/** The app in this process: RSS after full collections after the warm-up and after `count` more sign-ins. */
async function settledRss(): Promise<void> {
  const count = Number(process.env.PASSKEY_SIGN_INS ?? 10_000);
  const warmUp = Number(process.env.PASSKEY_WARM_UP ?? 10_000);
  const { buildApp } = await import('../../src/app.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const dataDir = mkdtempSync(join(tmpdir(), 'passkey-bench-'));
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    // Each new browser says its own address, as against `npm start` in bench:flood.
    TRUST_PROXY: '127.0.0.1',
    DATA_DIR: dataDir,
    METRICS_PORT: '0',
    SEED_DEMO: 'true',
    LOG_LEVEL: 'warn',
  });
  const app = await buildApp(config);
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    const keys = await ownersPasskey(port);
    const collected = () => {
      const gc = (globalThis as { gc?: () => void }).gc!;
      gc();
      gc();
      return process.memoryUsage().rss / 1048576;
    };
    for (let i = 0; i < warmUp; i++) await signInFromNewBrowser(port, keys);
    const before = collected();
    for (let i = 0; i < count; i++) await signInFromNewBrowser(port, keys);
    const after = collected();
    const round = (v: number) => Math.round(v * 10) / 10;
    console.log(
      JSON.stringify({ before: round(before), after: round(after), growth: round(after - before) }),
    );
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
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

if (process.argv[2] === 'settled') {
  await settledRss();
  process.exit(0); // idle keep-alive connections would hold the process open
} else {
  await quiet();
  process.exit(0);
}
