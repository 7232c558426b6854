// The session cache (docs/rules.md#authentication-and-csrf): what it forgets, and when it caches nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SessionService } from '../../src/auth/sessions.ts';
import { ManualClock } from '../../src/clock.ts';
import type { SessionRecord, SessionsRepository } from '../../src/db/repositories/sessions.ts';

/** A repository that holds sessions in memory and counts its look-ups. */
function repository() {
  const rows = new Map<string, SessionRecord>();
  const counts = { finds: 0 };
  const fake = {
    async create(row: { idHash: string; userId: number; expiresAt: number; signedInAt: number }) {
      const user = {
        id: row.userId,
        email: 'a@example.com',
        name: 'A',
        role: 'employee' as const,
        mustChangePassword: false,
      };
      rows.set(row.idHash, {
        user,
        expiresAt: row.expiresAt,
        signedInAt: row.signedInAt,
        publicId: 'p',
        lastSeenAt: row.signedInAt,
      });
    },
    async find(idHash: string) {
      counts.finds++;
      return rows.get(idHash) ?? null;
    },
    async touch() {},
    async delete(idHash: string) {
      rows.delete(idHash);
    },
  };
  return { fake: fake as unknown as SessionsRepository, rows, counts };
}

describe('SessionService cache', () => {
  it('serves a cached session until the account is forgotten, then asks the database again', async () => {
    const { fake, rows, counts } = repository();
    const sessions = new SessionService(fake, {
      secret: 's'.repeat(32),
      ttlMs: 3_600_000,
      cacheMs: 600_000,
      clock: new ManualClock(),
    });
    const { cookie } = await sessions.create(7);
    assert.ok(await sessions.resolve(cookie));
    assert.ok(await sessions.resolve(cookie));
    assert.equal(counts.finds, 1, 'cached');
    rows.clear(); // ended by another instance
    assert.ok(await sessions.resolve(cookie), 'still cached: nothing announced yet');
    sessions.forgetUser(8);
    assert.ok(await sessions.resolve(cookie), 'another account’s change forgets nothing of this one');
    sessions.forgetUser(7);
    assert.equal(await sessions.resolve(cookie), null);
  });

  it('caches nothing while other instances’ changes go unheard', async () => {
    const { fake, counts } = repository();
    const sessions = new SessionService(fake, {
      secret: 's'.repeat(32),
      ttlMs: 3_600_000,
      cacheMs: 600_000,
      clock: new ManualClock(),
    });
    const { cookie } = await sessions.create(7);
    await sessions.resolve(cookie);
    sessions.setCoherent(false);
    for (let i = 0; i < 3; i++) assert.ok(await sessions.resolve(cookie));
    assert.equal(counts.finds, 4, 'the database on every request');
    sessions.setCoherent(true);
    await sessions.resolve(cookie);
    await sessions.resolve(cookie);
    assert.equal(counts.finds, 5, 'cached again once heard');
  });
});
