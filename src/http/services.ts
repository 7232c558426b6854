// What route handlers work with: services built once — never the database, a repository or a transaction.
import type { FastifyPluginAsync } from 'fastify';
import type { AdminAccounts } from '../accounts/admin-accounts.ts';
import type { OwnAccount } from '../accounts/own-account.ts';
import type { OwnPasskeys } from '../accounts/own-passkeys.ts';
import type { SignIns } from '../accounts/sign-in.ts';
import type { DeviceCookies } from '../auth/devices.ts';
import type { PasskeyCeremonies } from '../auth/passkeys.ts';
import type { PasswordRules } from '../auth/password-rules.ts';
import type { SecurityEventLog } from '../auth/security-event-log.ts';
import type { SessionService } from '../auth/sessions.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Login } from '../login/login.ts';
import type { RateLimitEngine } from '../rate-limit/engine.ts';
import type { TaskImporter } from '../tasks/task-import.ts';
import type { TaskService } from '../tasks/task-service.ts';
import type { Tasks } from '../tasks/tasks.ts';
import type { ReadinessState } from './readiness.ts';

export interface Services {
  /** The validated configuration: the cookies' `Secure`, the relying party's origin. */
  readonly config: Config;
  /** The time: a day's date in an export's file name. */
  readonly clock: Clock;
  /**
   * The login defence (src/login/): the gate, its pressure, proved work and both sign-ins' failure
   * flows; the sign-in routes run their attempts over it and declare its hooks.
   */
  readonly login: Login;
  /** A sign-in's write once its credential checked: the session, the device cookie, the event. */
  readonly signIns: SignIns;
  /** Sessions: resolved from their cookie on every request, ended at a sign-out. */
  readonly sessions: SessionService;
  /** Device cookies (docs/rules.md#known-devices): issued at a sign-in, read to tell known-device attempts. */
  readonly devices: DeviceCookies;
  /** What a person changes on their own account: the password, their sessions, their known devices. */
  readonly ownAccount: OwnAccount;
  /** A person's own passkeys (docs/rules.md#passkeys). */
  readonly ownPasskeys: OwnPasskeys;
  /** What an admin changes on other accounts, and sees of them. */
  readonly adminAccounts: AdminAccounts;
  /** The passkey ceremonies, with their single-use challenges: a passkey sign-in's options. */
  readonly ceremonies: PasskeyCeremonies;
  /** The rules every new password meets (length, email, the common list, the breach API). */
  readonly passwordRules: PasswordRules;
  /** Tasks as lists and pages, one task, assignees, clients, bulk reassignment (docs/rules.md#tasks). */
  readonly tasks: Tasks;
  /** Tasks created and edited under a version, with their history (docs/rules.md#tasks). */
  readonly taskService: TaskService;
  /** A CSV import, all or nothing (docs/rules.md#export-and-import). */
  readonly taskImporter: TaskImporter;
  readonly rateLimit: RateLimitEngine;
  /** Where locks, admin resets and refused known devices are recorded (a SecurityEventSink) and read back. */
  readonly securityEvents: SecurityEventLog;
  /** The dependencies' state, looked at once a second at most: /readyz answers it, /metrics shows it. */
  readonly readiness: ReadinessState;
}

/** A file of routes: app.ts registers it with the services, and its handlers ask them. */
export type RoutesPlugin = FastifyPluginAsync<{ services: Services }>;
