// Every service the app runs, built once from the stores and repositories: what the routes are given.
import { createHmac } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { AdminAccounts } from '../accounts/admin-accounts.ts';
import { OwnAccount } from '../accounts/own-account.ts';
import { OwnPasskeys } from '../accounts/own-passkeys.ts';
import { SignIns } from '../accounts/sign-in.ts';
import { DeviceCookies } from '../auth/devices.ts';
import { PasskeyCeremonies } from '../auth/passkeys.ts';
import type { PasswordRules } from '../auth/password-rules.ts';
import type { PasswordChecker } from '../auth/passwords.ts';
import { SecurityEventLog } from '../auth/security-event-log.ts';
import { SessionService } from '../auth/sessions.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { ReadinessState } from '../http/readiness.ts';
import type { Services } from '../http/services.ts';
import { Login } from '../login/login.ts';
import { RateLimitEngine } from '../rate-limit/engine.ts';
import { TaskImporter } from '../tasks/task-import.ts';
import { TaskService } from '../tasks/task-service.ts';
import { Tasks } from '../tasks/tasks.ts';
import type { Repositories } from './repositories.ts';
import type { Stores } from './stores.ts';

export interface ServiceParts {
  readonly config: Config;
  readonly clock: Clock;
  readonly stores: Stores;
  readonly repositories: Repositories;
  /** The password checker, its dummy hash made. */
  readonly passwords: PasswordChecker;
  readonly passwordRules: PasswordRules;
  /** The app's own logger (Fastify's), for what goes wrong away from a request. */
  readonly log: FastifyBaseLogger;
}

export async function createServices(parts: ServiceParts): Promise<Services> {
  const { config, clock, stores, repositories, passwords, log } = parts;
  const { db, stack } = stores;
  const instance = config.instanceId;
  // Unknown emails are checked at the costs stored, dormant accounts' older ones included.
  const dummyKey = createHmac('sha256', config.sessionSecret).update('tp-dummy-hash').digest();
  await passwords.useStoredCosts(await repositories.users.hashParameterCounts(), dummyKey);
  const securityEvents = new SecurityEventLog({
    repository: repositories.securityEvents,
    clock,
    instance,
    retentionMs: config.securityEventRetentionMs,
    onError: (error, lostEvents) => log.error({ err: error, lostEvents }, 'security events not stored'),
  });
  const sessions = new SessionService(repositories.sessions, {
    secret: config.sessionSecret,
    ttlMs: config.sessionTtlMs,
    cacheMs: config.sessionCacheMs,
    clock,
    onTouchError: (error) => log.warn({ err: error }, "a session's last use was not written"),
  });
  const devices = new DeviceCookies({ secret: config.sessionSecret, ttlMs: config.deviceCookieTtlMs, clock });
  const rateLimit = new RateLimitEngine(config.rateLimits, stack.store, { clock, log });
  // Challenges live with the budgets (Redis when the fleet shares one): any instance takes them.
  const ceremonies = new PasskeyCeremonies(stack.store);
  const login = new Login({
    gate: config.loginGate,
    initialCheckMs: passwords.bootCheckMs,
    secret: config.sessionSecret,
    instance,
    clock,
    engine: rateLimit,
    // Challenge ids are claimed where the budgets are: shared by the fleet when Redis is configured.
    claims: stack.store,
    events: securityEvents,
    accounts: repositories.users,
    passwords,
    devices,
    passkeys: repositories.passkeys,
    ceremonies,
  });
  return {
    config,
    clock,
    login,
    signIns: new SignIns({ db, sessions, devices, instance }),
    sessions,
    devices,
    ownAccount: new OwnAccount({
      db,
      clock,
      instance,
      sessions,
      devices,
      passwords,
      rules: parts.passwordRules,
      recheck: login.passwordChange,
    }),
    ownPasskeys: new OwnPasskeys({
      passkeys: repositories.passkeys,
      ceremonies,
      events: securityEvents,
      clock,
    }),
    adminAccounts: new AdminAccounts({ db, clock, instance, passwords, sessions }),
    ceremonies,
    passwordRules: parts.passwordRules,
    tasks: new Tasks({
      tasks: repositories.tasks,
      users: repositories.users,
      clients: repositories.clients,
      clock,
    }),
    taskService: new TaskService({ db, clock }),
    taskImporter: new TaskImporter({ db, clock }),
    rateLimit,
    securityEvents,
    // The database and the store stack's checks (Redis), shared by /readyz and /metrics.
    readiness: new ReadinessState(db, stack.readiness, clock),
  };
}
