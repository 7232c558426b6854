// The security events an account change writes in its own transaction: who acted, from where, when.
import type { Queryable } from '../db/database.ts';
import { SecurityEventsRepository } from '../db/repositories/security-events.ts';
import type { User } from '../db/repositories/users.ts';
import { normaliseEmail } from '../email.ts';
import type { SecurityEventType } from '../security-event.ts';

/** Who made a change and when, as its security events record it. */
export interface ChangeContext {
  /** Epoch ms. */
  readonly at: number;
  /** The instance id events carry. */
  readonly instance: string;
  /**
   * The events' `control`: where the change came from (`users-cli`, `bootstrap-admin`, `admin`,
   * `account`), or what it concerns (`passkey` for an admin's removal of one).
   */
  readonly control: string;
  /** The admin or the owner who acted; null for the command line. */
  readonly actorId: number | null;
  /** The address the change came from (a request's); null for the command line. */
  readonly address?: string | null;
}

/** Stores one event of each type about `user`, in one statement on `connection`. */
export function recordEvents(
  connection: Queryable,
  context: ChangeContext,
  user: User,
  types: readonly SecurityEventType[],
): Promise<void> {
  return new SecurityEventsRepository(connection).insert(
    types.map((type) => ({
      at: context.at,
      type,
      control: context.control,
      email: normaliseEmail(user.email),
      address: context.address ?? null,
      instance: context.instance,
      actorId: context.actorId,
    })),
  );
}
