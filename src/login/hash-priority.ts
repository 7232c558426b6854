// Password checks below the event loop's priority: a check may wait for a request, never the reverse.
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The niceness of libuv's pool threads, where argon2id runs (the event loop keeps 0). On 2 cores
 * with both busy checking passwords, a signed-in user's request waited for a time slice: 133 ms
 * (p99) under the flood of `npm run bench:flood`, 19 ms with the pool at 10 (BENCHMARKS.md). The
 * checks lose nothing when the loop is idle; they give way while it has work.
 */
export const POOL_NICENESS = 10;

/**
 * Lowers the priority of libuv's pool threads (named `libuv-worker`) to `niceness`, once the pool
 * has started (libuv starts all its threads at the first use). Linux only: elsewhere, and where a
 * thread cannot be changed, it leaves things as they are. Returns how many threads it changed.
 */
export function lowerThreadPoolPriority(niceness = POOL_NICENESS): number {
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return 0; // not Linux
  }
  let changed = 0;
  for (const tid of tasks) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== 'libuv-worker') continue;
      // On Linux a thread id names that thread alone (setpriority(2)).
      setPriority(Number(tid), niceness);
      changed++;
    } catch {
      // the thread ended, or the priority may not be changed here
    }
  }
  return changed;
}
