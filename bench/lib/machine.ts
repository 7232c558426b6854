// The machine a run happened on, and the CPU pinning the run can use (taskset, two cores or more).
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

export interface Machine {
  nproc: number;
  cpuModel: string;
  node: string;
  platform: string;
  /** Cores for the server and the load generator, or null when not pinned. */
  pinning: { server: number; load: number } | null;
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function describeMachine(): Machine {
  const list = cpus();
  const pin = list.length >= 2 && hasTaskset();
  return {
    nproc: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    pinning: pin ? { server: 0, load: 1 } : null,
  };
}

/** Pins every thread of a running process to one core. */
export function pinProcess(pid: number, core: number): void {
  execFileSync('taskset', ['-a', '-cp', String(core), String(pid)], { stdio: 'ignore' });
}

/**
 * Runs `work` with every thread of this process allowed on every core, then pins them back to the
 * cores they had: a phase that measures the whole machine (its children inherit the wider set).
 */
export async function onAllCores<T>(work: () => Promise<T>): Promise<T> {
  let before: string;
  try {
    before = /list:\s*(\S+)/.exec(
      execFileSync('taskset', ['-cp', String(process.pid)], { encoding: 'utf8' }),
    )![1]!;
  } catch {
    return work(); // no taskset: nothing was pinned
  }
  const all = `0-${cpus().length - 1}`;
  execFileSync('taskset', ['-a', '-cp', all, String(process.pid)], { stdio: 'ignore' });
  try {
    return await work();
  } finally {
    execFileSync('taskset', ['-a', '-cp', before, String(process.pid)], { stdio: 'ignore' });
  }
}
