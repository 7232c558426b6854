// Build step: a migrated embedded data directory that a first start copies instead of running initdb.
// Run: node src/db/pglite-template.ts   (part of npm run build)
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { openDatabase, PGLITE_TEMPLATE_DIR } from './database.ts';
import { migrate } from './migrate.ts';

/** Initialises a data directory at `dir` and applies every migration (no demo seed: SEED_DEMO decides at start). */
export async function buildPgliteTemplate(dir: string = PGLITE_TEMPLATE_DIR): Promise<void> {
  const building = `${dir}.building-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  const db = await openDatabase({ databaseUrl: null, dataDir: building, template: false });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  await rm(dir, { recursive: true, force: true });
  await rename(building, dir);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  await buildPgliteTemplate();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `embedded database template built in ${seconds} s${existsSync(PGLITE_TEMPLATE_DIR) ? '' : ' (missing!)'}`,
  );
}
