// Every security-event type the code declares can be stored, and no other, on both databases.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SecurityEventsRepository } from '../../src/db/repositories/security-events.ts';
import { SECURITY_EVENT_TYPES } from '../../src/security-event.ts';
import { closeTestDatabases, type DatabaseKind, testDatabase } from '../helpers/database.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);
const skipPostgres = await skipUnless('postgres');

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`security_events' type check (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('stores an event of every type the code reports, and refuses others', async () => {
      const { db } = await testDatabase(kind);
      const repository = new SecurityEventsRepository(db);
      const event = { at: 0, control: 'test', email: null, address: null, instance: 'types', actorId: null };
      await repository.insert(SECURITY_EVENT_TYPES.map((type) => ({ ...event, type })));
      const stored = await db.query<{ type: string }>(
        "SELECT type FROM security_events WHERE instance = 'types'",
      );
      assert.deepEqual(stored.map((row) => row.type).sort(), [...SECURITY_EVENT_TYPES].sort());
      await assert.rejects(
        repository.insert([{ ...event, type: 'no-such-type' as (typeof SECURITY_EVENT_TYPES)[number] }]),
      );
      await db.query("DELETE FROM security_events WHERE instance = 'types'");
    });
  });
}
