// One process at a time on an embedded data directory: PGlite itself lets a second open (and corrupt) it.
import { mkdir, rm } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import path from 'node:path';

/** The socket inside DATA_DIR that the process using the directory listens on. */
export const LOCK_SOCKET = '.task-portal.lock';

/**
 * The longest path a Unix socket may have, in bytes: `sun_path` holds 108 on Linux, 104 on the
 * BSDs and macOS, its terminating NUL included.
 */
export const SOCKET_PATH_MAX_BYTES = process.platform === 'linux' ? 107 : 103;

/** DATA_DIR cannot be had; `message` is one line for a person, naming the variable. */
export class DataDirError extends Error {}

/** Another live process (a running server, the account command line) has the directory. */
export class DataDirInUseError extends DataDirError {
  constructor(dataDir: string) {
    super(
      `the embedded database in ${dataDir} is in use by another process (a running server?): stop it first, or use DATABASE_URL`,
    );
    this.name = 'DataDirInUseError';
  }
}

/** The directory cannot hold the database or its lock: too long a path, not writable, not a directory. */
export class DataDirUnusableError extends DataDirError {
  constructor(dataDir: string, why: string, options?: ErrorOptions) {
    super(
      `DATA_DIR=${dataDir} cannot be used: ${why}; choose another DATA_DIR, or use DATABASE_URL`,
      options,
    );
    this.name = 'DataDirUnusableError';
  }
}

/** What an error of the file system says about DATA_DIR in words, or null for one this does not expect. */
function unusable(dataDir: string, error: unknown): DataDirUnusableError | null {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'EACCES' || code === 'EPERM'
      ? `this process (uid ${process.getuid?.() ?? '?'}) may not write there`
      : code === 'EROFS'
        ? 'it is on a read-only file system'
        : code === 'ENOTDIR' || code === 'EEXIST'
          ? 'it, or a folder above it, is a file'
          : code === 'EINVAL' || code === 'ENAMETOOLONG'
            ? 'the path of its lock is too long for a Unix socket'
            : null;
  return why === null ? null : new DataDirUnusableError(dataDir, why, { cause: error });
}

/** Creates DATA_DIR if absent; a directory that cannot be made is a DataDirUnusableError. */
export async function makeDataDir(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true });
  } catch (error) {
    throw unusable(dataDir, error) ?? error;
  }
}

/**
 * Takes the directory for this process until `release` (or the process's end). The lock is a Unix
 * socket this process listens on: the kernel ends it with the process, however that ends, and a
 * connection to it tells a live holder (even in another container on the same volume) from the
 * file a crash left behind, which is then removed and taken.
 */
export async function lockDataDir(dataDir: string): Promise<{ release(): Promise<void> }> {
  const socketPath = path.join(dataDir, LOCK_SOCKET);
  // Said before trying: some systems cut a long socket path short instead of refusing it.
  const bytes = Buffer.byteLength(socketPath);
  if (bytes > SOCKET_PATH_MAX_BYTES)
    throw new DataDirUnusableError(
      dataDir,
      `its lock ${socketPath} would be a Unix socket of ${bytes} bytes, and one may have at most ${SOCKET_PATH_MAX_BYTES} (DATA_DIR at most ${SOCKET_PATH_MAX_BYTES - Buffer.byteLength(path.sep + LOCK_SOCKET)})`,
    );
  for (let attempt = 0; attempt < 2; attempt++) {
    const server = createServer((socket) => socket.end());
    try {
      await listen(server, socketPath);
      server.unref(); // the lock never keeps the process alive
      return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw unusable(dataDir, error) ?? error;
    }
    if (await answers(socketPath)) break;
    await rm(socketPath, { force: true }); // left by a process that is gone
  }
  throw new DataDirInUseError(dataDir);
}

function listen(server: Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Whether a process listens on the socket (refused or absent: nobody does). */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
