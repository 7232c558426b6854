// npm run bench:profile: one target (ours · memory by default) under the bench load with --cpu-prof.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchDataDirs, comparisonTargets, NEVER_REFUSES, SESSION_CACHE_TTL } from '../lib/catalogue.ts';
import { type CpuProfile, type FrameShare, summariseProfile } from '../lib/cpu-profile.ts';
import { measure } from '../lib/load.ts';
import { describeMachine, pinProcess } from '../lib/machine.ts';
import { options } from '../lib/options.ts';
import { openBenchRedis } from '../lib/redis.ts';
import { meRequests } from '../lib/requests.ts';
import type { BenchSession } from '../lib/serve.ts';
import { TargetProcess } from '../lib/target-process.ts';

const machine = describeMachine();
if (machine.pinning) pinProcess(process.pid, machine.pinning.load);
const dir = mkdtempSync(join(tmpdir(), 'tp-bench-prof-'));
/** BENCH_PROFILE_TARGET picks another target (e.g. raw) to compare where its time goes. */
const name = process.env.BENCH_PROFILE_TARGET || 'ours-memory';
const redis = name.endsWith('-redis')
  ? await openBenchRedis(options.redisUrl, machine.pinning?.load ?? null)
  : null;
const spec = comparisonTargets(NEVER_REFUSES, options.users, redis?.url ?? null).find((t) => t.name === name);
if (!spec) throw new Error(`no target ${name}`);
const target = await TargetProcess.start(
  { ...spec, nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '200'] },
  machine.pinning?.server ?? null,
);
const requests = meRequests(options.users, (target.extra as BenchSession[] | undefined) ?? null);
const run = await measure(target, requests, {
  duration: options.duration,
  warmup: options.warmup,
  connections: options.connections,
});
await target.stop();
await redis?.stop();
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('the target wrote no profile');
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
for (const d of [dir, ...benchDataDirs()]) rmSync(d, { recursive: true, force: true });
const summary = summariseProfile(profile, run.window[0], run.window[1]);

// Shares of the profile times the CPU per request: roughly where each request's microseconds go.
const list = (shares: FrameShare[]) =>
  shares
    .map(
      (s) =>
        `| ${(s.share * 100).toFixed(1)} % | ${(s.share * run.cpuMicrosPerRequest).toFixed(1)} | \`${s.frame}\` |`,
    )
    .join('\n');
const section = [
  `Profile of ${spec.label} (\`${name === 'ours-memory' ? '' : `BENCH_PROFILE_TARGET=${name} `}npm run bench:profile\`, ${new Date().toISOString().slice(0, 10)}): ` +
    `${run.rps.toFixed(0)} req/s, ${run.cpuMicrosPerRequest.toFixed(1)} µs CPU/req during the profiled ${options.duration} s; µs/req below is share × that ` +
    `(the profiler itself slows the server). ${summary.samples} samples (200 µs interval) from the measured run only, ` +
    `startup and logins excluded. Sessions cached for SESSION_CACHE_TTL=${SESSION_CACHE_TTL || '5m (default)'}. ` +
    'A hook that calls `done()` synchronously counts what runs after it in its total time.',
  '',
  '#### Self time by area',
  '',
  '| share | µs/req | area |',
  '| --- | --- | --- |',
  list(summary.areas.slice(0, 12)),
  '',
  '#### Top frames by self time',
  '',
  '| share | µs/req | frame |',
  '| --- | --- | --- |',
  list(summary.self),
  '',
  '#### Our functions by total time (callees included)',
  '',
  '| share | µs/req | frame |',
  '| --- | --- | --- |',
  list(summary.oursTotal.slice(0, 15)),
].join('\n');
console.log(section);
process.exit(0);
