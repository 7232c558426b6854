// Accounts of a test's own (the file's database is shared by its tests), signed in from own browsers.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { UsersRepository } from '../../src/db/repositories/users.ts';
import type { Role } from '../../src/domain.ts';
import type { TestApp, TestClient } from './app.ts';
import { testHash } from './database.ts';

/** The password of every account freshAccount makes: long, and on no list. */
export const OWN_PASSWORD = 'plum orbit lantern 47 quietly';
/** A new password the rules take. */
export const NEW_PASSWORD = 'violet harbour cinder 93 slowly';

/** A new account (an employee unless said) with OWN_PASSWORD: its email and id. */
export async function freshAccount(
  { database }: TestApp,
  role: Role = 'employee',
): Promise<{ email: string; id: number }> {
  const email = `person-${randomBytes(4).toString('hex')}@example.com`;
  const user = await new UsersRepository(database.db).create({
    email,
    name: `Person ${email.slice(7, 15)}`,
    role,
    passwordHash: await testHash(OWN_PASSWORD),
  });
  assert.ok(user);
  return { email, id: user.id };
}

/** A browser signed in to `email`, with its own address, cookies and CSRF token. */
export async function signedIn(
  app: TestApp,
  email: string,
  password = OWN_PASSWORD,
  headers: Record<string, string> = {},
): Promise<TestClient> {
  const browser = app.client();
  await browser.fetchCsrf();
  const response = await browser.request({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email, password },
    headers,
  });
  assert.equal(response.statusCode, 200, response.body);
  browser.csrfToken = response.json<{ csrfToken: string }>().csrfToken;
  return browser;
}

/** POST /api/auth/password from `browser`; keeps the rotated CSRF token on success. */
export async function changePassword(browser: TestClient, currentPassword: string, newPassword: string) {
  const response = await browser.request({
    method: 'POST',
    url: '/api/auth/password',
    payload: { currentPassword, newPassword },
  });
  if (response.statusCode === 200) browser.csrfToken = response.json<{ csrfToken: string }>().csrfToken;
  return response;
}

/** The stored events about `email`, oldest first, as `type control`. */
export async function eventsAbout(app: TestApp, email: string): Promise<string[]> {
  await app.app.services.securityEvents.flush();
  const rows = await app.database.db.query<{ type: string; control: string }>(
    'SELECT type, control FROM security_events WHERE email = $1 ORDER BY id',
    [email],
  );
  return rows.map((row) => `${row.type} ${row.control}`);
}
