// A private schema on a PostgreSQL server for one run, dropped afterwards (null when none answers).
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';

export interface BenchSchema {
  /** The URL that opens the schema (its search_path set). */
  readonly url: string;
  drop(): Promise<void>;
}

async function run(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** libpq falls back to the OS user when a URL names none; the `pg` driver needs it spelled out. */
function withUser(url: string): string {
  const parsed = new URL(url);
  if (!parsed.username) parsed.username = process.env.PGUSER || process.env.USER || userInfo().username;
  return parsed.toString();
}

export async function openBenchSchema(serverUrl: string): Promise<BenchSchema | null> {
  const url = withUser(serverUrl);
  const schema = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  try {
    await run(url, `CREATE SCHEMA ${schema}`);
  } catch {
    return null;
  }
  const withPath = new URL(url);
  withPath.searchParams.set('options', `-c search_path=${schema}`);
  return { url: withPath.toString(), drop: () => run(url, `DROP SCHEMA ${schema} CASCADE`) };
}
