// Preloaded into a target (node --import): SIGUSR2 opens and closes a window of its GC and allocation.
//
// Works for any checkout's targets (the breakdown phase preloads it into a baseline's too): it
// needs nothing of the target but the signal. At the end of a window it appends one JSON line to
// BENCH_PROBE_FILE: bytes V8 allocated, each collection's kind and cost (v8.GCProfiler), and the
// process's CPU time over the window.
import { appendFileSync } from 'node:fs';
import { GCProfiler, getHeapStatistics } from 'node:v8';

/** What one window measured, as the driver reads it (bench/breakdown-phase.ts). */
export interface ProbeWindow {
  readonly allocatedBytes: number;
  /** Collections by V8's kind (Scavenge, MarkSweepCompact, …): how many and their cost in µs. */
  readonly collections: Record<string, { count: number; micros: number }>;
  readonly cpuMicros: number;
  /** The heap's used bytes after the window's last full collection (what a full collection marks), 0 when none ran. */
  readonly liveAfterFullGc: number;
}

const file = process.env.BENCH_PROBE_FILE;
/** Bytes V8 has allocated since the start (Node 26's heap statistics; @types/node does not list it yet). */
const allocatedSoFar = () =>
  (getHeapStatistics() as { total_allocated_bytes?: number }).total_allocated_bytes ?? 0;
let open: { profiler: GCProfiler; allocated: number; cpu: NodeJS.CpuUsage } | null = null;

if (file) {
  process.on('SIGUSR2', () => {
    if (!open) {
      const profiler = new GCProfiler();
      profiler.start();
      open = { profiler, allocated: allocatedSoFar(), cpu: process.cpuUsage() };
      return;
    }
    const { profiler, allocated, cpu } = open;
    open = null;
    const collections: ProbeWindow['collections'] = {};
    let liveAfterFullGc = 0;
    for (const { gcType, cost, afterGC } of profiler.stop()?.statistics ?? []) {
      if (gcType === 'MarkSweepCompact') liveAfterFullGc = afterGC.heapStatistics.usedHeapSize;
      const kind = collections[gcType] ?? { count: 0, micros: 0 };
      collections[gcType] = { count: kind.count + 1, micros: kind.micros + cost };
    }
    const used = process.cpuUsage(cpu);
    const window: ProbeWindow = {
      allocatedBytes: allocatedSoFar() - allocated,
      collections,
      cpuMicros: used.user + used.system,
      liveAfterFullGc,
    };
    appendFileSync(file, `${JSON.stringify(window)}\n`);
  });
}
