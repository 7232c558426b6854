// The process's one stdout for JSON log lines: lines gathered into batches of about 8 KiB, each written synchronously.
import pino from 'pino';

/** Lines wait in memory until this many characters are pending (about 30 request lines)… */
export const LOG_BATCH_BYTES = 8192;
/** …or until this many ms have passed, so a quiet service's lines are never held for long. */
export const LOG_FLUSH_INTERVAL_MS = 100;

type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * What pino writes to. Why batches: one `write(2)` per request line was a sizeable part of a
 * request's CPU (and costs more on a pipe to a log collector than on a file). Why synchronous:
 * pino's default asynchronous stdout hands each write to a libuv thread, whose wake-up cost more
 * than the write it saved. Why the lines wait here rather than in sonic-boom (its `minLength`):
 * sonic-boom appends each string it is given to its buffer and measures the whole buffer's UTF-8
 * length again on every call, so a batch built there is copied and scanned once per call; here a
 * batch is one array of lines, joined once when it is full. (End to end, the difference is below
 * what the bench resolves: BENCHMARKS.md.)
 *
 * sonic-boom still does the writing (partial writes, EAGAIN, a broken pipe). A batch is written
 * when it fills, at most LOG_FLUSH_INTERVAL_MS after its first line (the timer armed by an earlier
 * batch may write it sooner), and at exit (a crash's last lines included). Only a SIGKILL can lose what is pending. An idle process has no timer of ours that
 * wakes it. Lines keep their order: every line of the process comes here.
 */
export class BatchedStdout {
  private readonly out: SonicBoom;
  private pending: string[] = [];
  private pendingChars = 0;
  /** Armed while lines wait: an idle process has no timer that wakes it. */
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly onFlushTimer = () => {
    this.flushTimer = null;
    this.writePending();
  };

  constructor(out: SonicBoom) {
    this.out = out;
  }

  write(line: string): boolean {
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.pendingChars >= LOG_BATCH_BYTES) this.writePending();
    else this.flushTimer ??= setTimeout(this.onFlushTimer, LOG_FLUSH_INTERVAL_MS).unref();
    return true;
  }

  /** Writes everything now, synchronously (shutdown, exit). */
  flushSync(): void {
    this.writePending();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    try {
      this.out.flushSync();
    } catch {
      // Nothing left to tell it to.
    }
  }

  private writePending(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    try {
      this.out.write(batch);
    } catch {
      // A stdout that is gone is not a reason to stop serving.
    }
  }
}

let stdout: BatchedStdout | null = null;

/** One per process, shared by every app in it (tests build many): stdout itself is one per process. */
export function stdoutLogDestination(): BatchedStdout {
  if (stdout) return stdout;
  const destination = new BatchedStdout(
    pino.destination({
      dest: 1,
      sync: true,
    }),
  );
  process.on('exit', () => destination.flushSync());
  stdout = destination;
  return destination;
}

/** Writes whatever is pending now. */
export function flushLogs(): void {
  stdout?.flushSync();
}
