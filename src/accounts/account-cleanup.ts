// After whoever held an account (docs/rules.md#accounts): sessions ended, devices forgotten, passkeys gone.
import type { Queryable } from '../db/database.ts';
import { deletePasskeys, type Passkey } from '../db/repositories/passkeys.ts';
import { SessionsRepository } from '../db/repositories/sessions.ts';
import { type User, UsersRepository } from '../db/repositories/users.ts';
import type { SecurityEventType } from '../security-event.ts';
import { type ChangeContext, recordEvents } from './account-events.ts';

/**
 * Ends every session of `user` and forgets its known devices (device cookies issued until
 * `context.at` stop counting as known), with a `sessions-ended` and a `devices-forgotten` security
 * event, all on `connection` — run it inside the transaction of the change that calls for it (a
 * password set by `users set-password`, an admin's reset) so the change and the clean-up happen
 * together or not at all. Sessions are rows: deleting them announces the account's change, and
 * every instance drops its cached sessions of it at commit (auth/sessions.ts). Answers how many
 * sessions ended.
 */
export async function endSessionsAndForgetDevices(
  connection: Queryable,
  user: User,
  context: ChangeContext,
): Promise<number> {
  const ended = await new SessionsRepository(connection).deleteForUser(user.id);
  await new UsersRepository(connection).forgetDevices(user.id, context.at);
  await recordEvents(connection, context, user, ['sessions-ended', 'devices-forgotten']);
  return ended;
}

/**
 * Removes `user`'s passkeys on `connection` — all of them, or only the one `passkeyId` names —
 * with a `passkey-removed` security event for each (so the events count them). Answers those
 * removed, oldest first; none when the account has no such passkey (and then records nothing).
 */
export async function removePasskeys(
  connection: Queryable,
  user: User,
  context: ChangeContext,
  passkeyId?: number,
): Promise<Passkey[]> {
  const removed = await deletePasskeys(connection, user.id, passkeyId);
  await recordEvents(
    connection,
    context,
    user,
    removed.map((): SecurityEventType => 'passkey-removed'),
  );
  return removed;
}
