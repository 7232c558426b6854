// An unknown email's cost after a cost change (docs/rules.md#authentication-and-csrf).
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { argon2Hasher, hashParameters, hashPassword, type PasswordHasher } from '../../src/auth/passwords.ts';
import { createTestApp, DEMO_PASSWORD } from '../helpers/app.ts';
import { closeTestDatabases, TEST_PASSWORD_HASH_COST } from '../helpers/database.ts';

after(closeTestDatabases);

/** A hasher that notes the stored hash of every check (its cost is what a timing shows), then checks it. */
class RecordingHasher implements PasswordHasher {
  readonly verified: string[] = [];
  verify(password: string, stored: string): Promise<boolean> {
    this.verified.push(stored);
    return argon2Hasher.verify(password, stored);
  }
  hash(password: string, memoryKiB: number): Promise<string> {
    return argon2Hasher.hash(password, memoryKiB);
  }
}

/** What PASSWORD_HASH_COST was before the change: the dormant accounts' hashes are still at it. */
const OLD_COST = 32;
const OLD = `$argon2id$v=19$m=${OLD_COST},t=2,p=1`;
const TODAY = `$argon2id$v=19$m=${TEST_PASSWORD_HASH_COST},t=2,p=1`;

/** Starts the app with the accounts matching `where` at a hash of the old cost (the next test's reset puts them back). */
async function appWithDormant(t: TestContext, where: string) {
  const old = await hashPassword(DEMO_PASSWORD, OLD_COST);
  const hasher = new RecordingHasher();
  const app = await createTestApp({
    hasher,
    beforeStart: async ({ db }) => {
      await db.query(`UPDATE users SET password_hash = $1 WHERE ${where}`, [old]);
    },
  });
  t.after(app.close);
  return { app, hasher };
}

describe('POST /api/auth/login of an unknown email after the hash cost changed', () => {
  it('is checked at the dormant accounts’ cost when every account is dormant, as a wrong password is', async (t) => {
    const { app, hasher } = await appWithDormant(t, 'true');
    assert.equal((await app.client().login('nobody@example.com', 'wrong')).statusCode, 401);
    assert.equal((await app.client().login('alice@example.com', 'wrong')).statusCode, 401);
    assert.deepEqual(hasher.verified.map(hashParameters), [OLD, OLD]);
  });

  it('is checked at the costs stored in the accounts’ proportions, the same email always at the same cost', async (t) => {
    const { app, hasher } = await appWithDormant(t, 'id % 2 = 0');
    const emails = Array.from({ length: 24 }, (_, i) => `unknown-${i}@example.com`);
    for (const email of [...emails, ...emails.map((e) => ` ${e.toUpperCase()}`)])
      assert.equal((await app.client().login(email, 'wrong')).statusCode, 401);
    const costs = hasher.verified.map(hashParameters);
    assert.deepEqual(costs.slice(24), costs.slice(0, 24), 'each email (in any spelling) at one cost');
    assert.deepEqual([...new Set(costs)].sort(), [OLD, TODAY].sort(), 'both costs stored are used');
  });
});
