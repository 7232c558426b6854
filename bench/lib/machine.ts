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
