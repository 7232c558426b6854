// Builds the portal into web/dist with Vite; `--if-stale` builds only when dist is missing or stale.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { build } from 'vite';

const WEB = fileURLToPath(new URL('.', import.meta.url));
const DIST_INDEX = join(WEB, 'dist', 'index.html');
/** What the bundle is made from: the page itself and the typed client it imports. */
const SOURCES = [
  join(WEB, 'index.html'),
  join(WEB, 'vite.config.ts'),
  join(WEB, 'src'),
  fileURLToPath(new URL('../src/client', import.meta.url)),
];

/** Builds web/dist now, with a gzip and a brotli copy of each file for the server to send as they are. */
export async function buildPortal(options: { quiet?: boolean } = {}): Promise<void> {
  await build({ configFile: join(WEB, 'vite.config.ts'), logLevel: options.quiet ? 'warn' : 'info' });
  compressAll(join(WEB, 'dist'));
}

function compressAll(directory: string): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) compressAll(path);
    else if (/\.(html|js|css|svg)$/.test(entry.name)) {
      const content = readFileSync(path);
      writeFileSync(`${path}.gz`, gzipSync(content, { level: 9 }));
      writeFileSync(`${path}.br`, brotliCompressSync(content));
    }
  }
}

/** Builds web/dist when it is missing or older than a source file; returns whether it built. */
export async function ensurePortalBuilt(options: { quiet?: boolean } = {}): Promise<boolean> {
  if (existsSync(DIST_INDEX) && statSync(DIST_INDEX).mtimeMs >= newestSource()) return false;
  await buildPortal(options);
  return true;
}

function newestSource(): number {
  let newest = 0;
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const source of SOURCES) visit(source);
  return newest;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!process.argv.includes('--if-stale')) await buildPortal();
  else if (!(await ensurePortalBuilt())) console.log('web/dist is up to date');
}
