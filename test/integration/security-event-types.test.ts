// Every security-event type the code declares can be stored: the migrations' CHECK list and src/security-event.ts agree.
import { after, describe, it } from 'node:test';
import { SecurityEventsRepository } from '../../src/db/repositories/security-events.ts';
import { SECURITY_EVENT_TYPES } from '../../src/security-event.ts';
import { closeTestDatabases, type DatabaseKind, testDatabase } from '../helpers/database.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);
const skipPostgres = await skipUnless('postgres');

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`security_events (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('stores an event of every type the code declares', async () => {
      const { db } = await testDatabase(kind);
      const events = new SecurityEventsRepository(db);
      for (const type of SECURITY_EVENT_TYPES) {
        const event = { at: Date.UTC(2026, 0, 1), type, control: 'test', instance: 'test-1' };
        await events.insert([{ ...event, email: null, address: null, actorId: null }]);
      }
    });
  });
}
