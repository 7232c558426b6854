// The stores a start opens: the database (migrated, seeded, its first admin made), the rate limiter's.
import type { FastifyBaseLogger } from 'fastify';
import { type BootstrapOutcome, bootstrapAdmin } from '../accounts/bootstrap-admin.ts';
import type { PasswordRules } from '../auth/password-rules.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { type Database, openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { seedDemo } from '../db/seed.ts';
import { createStore, type StoreStack } from '../rate-limit/stores/create-store.ts';

export interface Stores {
  readonly db: Database;
  /** The budgets, the single-use marks (challenges) and their readiness checks: memory or Redis. */
  readonly stack: StoreStack;
  /** True when this start seeded the demo data into an empty database. */
  readonly seededDemo: boolean;
  /** What this start did about the first admin (BOOTSTRAP_ADMIN_*). */
  readonly bootstrapAdmin: BootstrapOutcome;
}

/**
 * Opens the database (or takes `given`), migrates it, seeds the demo data (SEED_DEMO) and makes the
 * first admin on the connection that holds the schema lock; then builds the store stack (or takes
 * `given`).
 */
export async function openStores(
  config: Config,
  given: { readonly database?: Database; readonly store?: StoreStack },
  { clock, logger, rules }: { clock: Clock; logger: FastifyBaseLogger; rules: PasswordRules },
): Promise<Stores> {
  const db = given.database ?? (await openDatabase(config));
  const hash = (password: string) => hashPassword(password, config.passwordHashCost);
  let seededDemo = false;
  let bootstrap: BootstrapOutcome = 'admin-exists';
  await migrate(db, async (connection) => {
    if (config.seedDemo) seededDemo = await seedDemo(connection, hash);
    bootstrap = await bootstrapAdmin(connection, config.bootstrapAdmin, {
      clock,
      instance: config.instanceId,
      hashPassword: hash,
      rules,
    });
  });
  const storeOptions = { redis: config.redis, failureMode: config.rateLimits.storeFailure };
  const stack = given.store ?? (await createStore(storeOptions, clock, logger));
  return { db, stack, seededDemo, bootstrapAdmin: bootstrap };
}
