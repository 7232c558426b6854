// The process's one stdout for JSON log lines: the lines of a loop turn joined, written synchronously in batches.
import pino from 'pino';

/** Lines wait in memory until this many bytes are pending (about 30 request lines)… */
export const LOG_BATCH_BYTES = 8192;
/** …or until this many ms have passed, so a quiet service's lines are never held for long. */
export const LOG_FLUSH_INTERVAL_MS = 100;

type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * What pino writes to. Why batches: one `write(2)` per request line was a sizeable part of a
 * request's CPU (and costs more on a pipe to a log collector than on a file). Why synchronous:
 * pino's default asynchronous stdout hands each write to a libuv thread, whose wake-up cost more
 * than the write it saved. Why lines are first joined per loop turn: sonic-boom measures and
 * appends every string it is given (a request line, built by concatenation, is flattened twice
 * on the way); one joined string per turn is measured and appended once.
 *
 * sonic-boom still does the writing (partial writes, EAGAIN, a broken pipe): the batch is written
 * when it fills, LOG_FLUSH_INTERVAL_MS after lines left a part batch, and at exit (a crash's last
 * lines included). Only a SIGKILL can lose what is pending. An idle process has no timer of ours
 * that wakes it. Lines keep their order: every line of the process comes here.
 */
export class BatchedStdout {
  private readonly out: SonicBoom;
  private pending: string[] = [];
  /** Armed while sonic-boom may hold a part batch: an idle process has no timer that wakes it. */
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly writePending = () => {
    if (this.pending.length === 0) return;
    const chunk = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    try {
      this.out.write(chunk);
    } catch {
      // A stdout that is gone is not a reason to stop serving.
    }
    this.flushTimer ??= setTimeout(this.flushBatch, LOG_FLUSH_INTERVAL_MS).unref();
  };
  private readonly flushBatch = () => {
    this.flushTimer = null;
    try {
      this.out.flush();
    } catch {
      // As above.
    }
  };

  constructor(out: SonicBoom) {
    this.out = out;
  }

  write(line: string): boolean {
    if (this.pending.length === 0) setImmediate(this.writePending);
    this.pending.push(line);
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
}

let stdout: BatchedStdout | null = null;

/** One per process, shared by every app in it (tests build many): stdout itself is one per process. */
export function stdoutLogDestination(): BatchedStdout {
  if (stdout) return stdout;
  const destination = new BatchedStdout(
    pino.destination({
      dest: 1,
      sync: true,
      minLength: LOG_BATCH_BYTES,
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
