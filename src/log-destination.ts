// The process's one stdout for JSON log lines: written synchronously, a few kilobytes at a time.
import pino from 'pino';

/** Lines wait in memory until this many bytes are pending (about 30 request lines)… */
export const LOG_BATCH_BYTES = 8192;
/** …or until this many ms have passed, so a quiet service's lines are never held for long. */
export const LOG_FLUSH_INTERVAL_MS = 100;

type Destination = ReturnType<typeof pino.destination>;
let stdout: Destination | null = null;

/**
 * Why a batch: one `write(2)` per request line was a sizeable part of a request's CPU (and more on
 * a pipe to a log collector than on a file). Why synchronous: pino's default asynchronous stdout
 * hands each write to a libuv thread, whose wake-up cost more than the write it saved. The batch
 * is written when it fills, every LOG_FLUSH_INTERVAL_MS, and at exit (a crash's last lines
 * included); only a SIGKILL can lose what is pending.
 *
 * One per process, shared by every app in it (tests build many): stdout itself is one per process.
 */
export function stdoutLogDestination(): Destination {
  if (stdout) return stdout;
  const destination = pino.destination({
    dest: 1,
    sync: true,
    minLength: LOG_BATCH_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
  });
  process.on('exit', () => flushQuietly(destination));
  stdout = destination;
  return destination;
}

/** Writes whatever is pending now (a closed or broken stdout is not worth an error at shutdown). */
export function flushLogs(): void {
  if (stdout) flushQuietly(stdout);
}

function flushQuietly(destination: Destination): void {
  try {
    destination.flushSync();
  } catch {
    // Nothing left to tell it to.
  }
}
