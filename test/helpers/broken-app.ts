// An app on a database of its own that a test may close, to see how the service fails without one.
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { TestClient, testConfig } from './app.ts';
import { privateTestDatabase, type TestDatabase } from './database.ts';
import { checkAnswersAgainstDocument } from './openapi-conformance.ts';

export interface ClosableDatabaseApp {
  readonly app: FastifyInstance;
  readonly database: TestDatabase;
  /** The app's clock: /readyz looks at the database again once it has moved a second. */
  readonly clock: ManualClock;
  client(): TestClient;
  /** Closes the app; its database too, unless a test closed it already. */
  close(): Promise<void>;
}

export async function appWithClosableDatabase(): Promise<ClosableDatabaseApp> {
  const database = await privateTestDatabase('embedded');
  const clock = new ManualClock();
  const app = await buildApp(testConfig(), { clock, database: database.db });
  await app.ready();
  checkAnswersAgainstDocument(app);
  let nextAddress = 1;
  return {
    app,
    database,
    clock,
    client: () => new TestClient(app, `203.0.113.${nextAddress++}`),
    async close() {
      await app.close();
      await database.close().catch(() => {}); // already closed by the test
    },
  };
}
