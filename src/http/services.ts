// What route handlers work with, built once by app.ts and passed to each route plugin.
import type { DeviceCookies } from '../auth/devices.ts';
import type { HashGate } from '../auth/hash-gate.ts';
import type { LoginPressure } from '../auth/login-pressure.ts';
import type { PasskeyCeremonies } from '../auth/passkeys.ts';
import type { PasswordChecker } from '../auth/passwords.ts';
import type { SecurityEventLog } from '../auth/security-event-log.ts';
import type { SessionService } from '../auth/sessions.ts';
import type { WorkChallenges } from '../auth/work-challenges.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { ClientsRepository } from '../db/repositories/clients.ts';
import type { IdempotencyKeysRepository } from '../db/repositories/idempotency-keys.ts';
import type { PasskeysRepository } from '../db/repositories/passkeys.ts';
import type { TasksRepository } from '../db/repositories/tasks.ts';
import type { UsersRepository } from '../db/repositories/users.ts';
import type { RateLimitEngine } from '../rate-limit/engine.ts';
import type { ReadinessState } from './readiness.ts';

export interface Services {
  readonly config: Config;
  readonly clock: Clock;
  readonly db: Database;
  readonly users: UsersRepository;
  readonly tasks: TasksRepository;
  /** Bulk reassignments' Idempotency-Keys: in-flight marks and stored answers. */
  readonly idempotencyKeys: IdempotencyKeysRepository;
  readonly clients: ClientsRepository;
  readonly sessions: SessionService;
  readonly passwords: PasswordChecker;
  /** The gate every password check at login passes (contract §11), and whether it is shedding now. */
  readonly loginGate: HashGate;
  readonly loginPressure: LoginPressure;
  /** Proved-work challenges for the shared lane under pressure (contract §15). */
  readonly workChallenges: WorkChallenges;
  /** Device cookies: issued at login, read to tell known-device attempts (contract §8). */
  readonly devices: DeviceCookies;
  readonly rateLimit: RateLimitEngine;
  /** Passkeys (contract §14): the stored credentials, and the ceremonies with their single-use challenges. */
  readonly passkeys: PasskeysRepository;
  readonly ceremonies: PasskeyCeremonies;
  /** Where locks, admin resets and refused known devices are recorded (a SecurityEventSink) and read back. */
  readonly securityEvents: SecurityEventLog;
  /** The dependencies' state, looked at once a second at most: /readyz answers it, /metrics shows it. */
  readonly readiness: ReadinessState;
}
