// The repositories over the app's one database, built once for the services and plugins.
import type { Database } from '../db/database.ts';
import { ClientsRepository } from '../db/repositories/clients.ts';
import { IdempotencyKeysRepository } from '../db/repositories/idempotency-keys.ts';
import { KnownDevicesRepository } from '../db/repositories/known-devices.ts';
import { PasskeysRepository } from '../db/repositories/passkeys.ts';
import { SecurityEventsRepository } from '../db/repositories/security-events.ts';
import { SessionsRepository } from '../db/repositories/sessions.ts';
import { TasksRepository } from '../db/repositories/tasks.ts';
import { UsersRepository } from '../db/repositories/users.ts';

export interface Repositories {
  readonly users: UsersRepository;
  readonly sessions: SessionsRepository;
  readonly knownDevices: KnownDevicesRepository;
  readonly passkeys: PasskeysRepository;
  readonly securityEvents: SecurityEventsRepository;
  /** Bulk reassignments' Idempotency-Keys: in-flight marks and stored answers. */
  readonly idempotencyKeys: IdempotencyKeysRepository;
  readonly tasks: TasksRepository;
  readonly clients: ClientsRepository;
}

export function createRepositories(db: Database): Repositories {
  return {
    users: new UsersRepository(db),
    sessions: new SessionsRepository(db),
    knownDevices: new KnownDevicesRepository(db),
    passkeys: new PasskeysRepository(db),
    securityEvents: new SecurityEventsRepository(db),
    idempotencyKeys: new IdempotencyKeysRepository(db),
    tasks: new TasksRepository(db),
    clients: new ClientsRepository(db),
  };
}
