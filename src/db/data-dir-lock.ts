// One process at a time on an embedded data directory: PGlite itself lets a second one open it (and corrupt it).
import { rm } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import path from 'node:path';

/** The socket inside DATA_DIR that the process using the directory listens on. */
export const LOCK_SOCKET = '.task-portal.lock';

/** Another live process (a running server, the account command line) has the directory. */
export class DataDirInUseError extends Error {
  constructor(dataDir: string) {
    super(
      `the embedded database in ${dataDir} is in use by another process (a running server?): stop it first, or use DATABASE_URL`,
    );
    this.name = 'DataDirInUseError';
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
  for (let attempt = 0; attempt < 2; attempt++) {
    const server = createServer((socket) => socket.end());
    try {
      await listen(server, socketPath);
      server.unref(); // the lock never keeps the process alive
      return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
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
