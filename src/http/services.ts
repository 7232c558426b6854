// What route handlers work with, built once by app.ts and passed to each route plugin.
import type { DeviceCookies } from '../auth/devices.ts';
import type { PasskeyCeremonies } from '../auth/passkeys.ts';
import type { PasswordRules } from '../auth/password-rules.ts';
import type { PasswordChecker } from '../auth/passwords.ts';
import type { SecurityEventLog } from '../auth/security-event-log.ts';
import type { SessionService } from '../auth/sessions.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { ClientsRepository } from '../db/repositories/clients.ts';
import type { IdempotencyKeysRepository } from '../db/repositories/idempotency-keys.ts';
import type { PasskeysRepository } from '../db/repositories/passkeys.ts';
import type { TasksRepository } from '../db/repositories/tasks.ts';
import type { UsersRepository } from '../db/repositories/users.ts';
import type { Login } from '../login/login.ts';
import type { RateLimitEngine } from '../rate-limit/engine.ts';
import type { TaskService } from '../tasks/task-service.ts';
import type { ReadinessState } from './readiness.ts';

export interface Services {
  readonly config: Config;
  readonly clock: Clock;
  readonly db: Database;
  readonly users: UsersRepository;
  readonly tasks: TasksRepository;
  /** Tasks created and edited under a version, with their history (docs/rules.md#tasks). */
  readonly taskService: TaskService;
  /** Bulk reassignments' Idempotency-Keys: in-flight marks and stored answers. */
  readonly idempotencyKeys: IdempotencyKeysRepository;
  readonly clients: ClientsRepository;
  readonly sessions: SessionService;
  readonly passwords: PasswordChecker;
  /** The rules every new password meets (length, email, the common list, the breach API). */
  readonly passwordRules: PasswordRules;
  /**
   * The login defence (src/login/): the gate, its pressure, proved work and both sign-ins' failure
   * flows; the sign-in routes run their attempts over it and declare its hooks.
   */
  readonly login: Login;
  /** Device cookies: issued at login, read to tell known-device attempts (docs/rules.md#known-devices). */
  readonly devices: DeviceCookies;
  readonly rateLimit: RateLimitEngine;
  /** Passkeys (docs/rules.md#passkeys): the stored credentials, and the ceremonies with their single-use challenges. */
  readonly passkeys: PasskeysRepository;
  readonly ceremonies: PasskeyCeremonies;
  /** Where locks, admin resets and refused known devices are recorded (a SecurityEventSink) and read back. */
  readonly securityEvents: SecurityEventLog;
  /** The dependencies' state, looked at once a second at most: /readyz answers it, /metrics shows it. */
  readonly readiness: ReadinessState;
}
