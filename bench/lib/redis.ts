// Redis for the bench: a private redis-server (so INFO counts only the bench), and round-trip counting.

import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './ports.ts';

export interface BenchRedis {
  readonly url: string;
  /** True when this run started the server (and so owns all of its traffic). */
  readonly private: boolean;
  stop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {}); // a refused probe is an answer, not a crash
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * Uses `url` when given; otherwise starts `redis-server` without persistence on a free port, pinned
 * to `core` (beside the load generator, off the server's core). Null when neither works.
 */
export async function openBenchRedis(url: string | null, core: number | null): Promise<BenchRedis | null> {
  if (url) return (await answers(url)) ? { url, private: false, stop: async () => {} } : null;
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child =
    core === null
      ? spawn('redis-server', args, { stdio: 'ignore' })
      : spawn('taskset', ['-c', String(core), 'redis-server', ...args], { stdio: 'ignore' });
  const failed = new Promise<false>((resolve) => child.once('error', () => resolve(false)));
  const privateUrl = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await Promise.race([answers(privateUrl), failed])) {
      return {
        url: privateUrl,
        private: true,
        stop: async () => {
          child.kill();
        },
      };
    }
    if (child.exitCode !== null) return null;
    await sleep(100);
  }
  child.kill();
  return null;
}

export interface TripCount {
  /** Commands clients sent (MONITOR, script-internal commands excluded) per decision. */
  readonly sent: number;
  /**
   * Socket reads Redis made per decision (INFO stats `total_reads_processed`): a client that
   * sends the commands of one event-loop turn in one write costs one read for all of them, so
   * under load this is below 1 per decision for a pipelining client and 1 for one that is not.
   */
  readonly roundTrips: number;
  /** Commands Redis executed (INFO commandstats, script-internal included) per decision. */
  readonly commands: number;
  /** Client commands by name, per decision. */
  readonly byCommand: Record<string, number>;
}

/**
 * Counts what `decisions` requests cost Redis: every command a client sends is seen by MONITOR
 * (commands a script runs show as source `lua` and are left out), and INFO commandstats gives
 * everything executed, and INFO stats the socket reads it took to receive them (the round trips).
 * MONITOR's own connection only receives, so it adds no reads.
 */
export async function countRedisWork(
  url: string,
  decisions: number,
  work: () => Promise<void>,
): Promise<TripCount> {
  const admin = new Redis(url);
  const monitor = await admin.monitor(); // its own connection
  // ioredis now and then takes a monitored line for the reply to a command of its own ("Command
  // queue state error", redis/ioredis#1981) and emits it as an error: without a listener that
  // ended a whole run. Such a line is the bench's own INFO, which is not counted anyway.
  monitor.on('error', () => {});
  const byCommand: Record<string, number> = {};
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source.endsWith('lua')) return;
    const name = String(args[0]).toLowerCase();
    if (name === 'info' || name === 'client') return;
    byCommand[name] = (byCommand[name] ?? 0) + 1;
  });
  const before = commandTotal(await admin.info('commandstats'));
  const readsBefore = readsProcessed(await admin.info('stats'));
  await work();
  const readsAfter = readsProcessed(await admin.info('stats'));
  await sleep(200); // MONITOR lines trail the replies a little
  const after = commandTotal(await admin.info('commandstats'));
  monitor.disconnect();
  admin.disconnect();
  const sent = Object.values(byCommand).reduce((a, b) => a + b, 0);
  for (const name of Object.keys(byCommand)) byCommand[name] = byCommand[name]! / decisions;
  return {
    sent: sent / decisions,
    // The admin's own INFO between the two readings is one read.
    roundTrips: Math.max(0, readsAfter - readsBefore - 1) / decisions,
    commands: (after - before) / decisions,
    byCommand,
  };
}

/** Read events Redis has processed on client sockets (Redis 6+). */
function readsProcessed(info: string): number {
  return Number(/^total_reads_processed:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

/** Sum of `calls` over commandstats, without the bench's own INFO/MONITOR bookkeeping. */
function commandTotal(info: string): number {
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) {
    if (!/^(info|monitor|client|ping|select)/.test(match[1]!)) total += Number(match[2]);
  }
  return total;
}
