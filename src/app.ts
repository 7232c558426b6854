// Builds the application: services, then plugins → routes → error and 404 handlers.
import { createHmac, randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino from 'pino';
import { type BootstrapOutcome, bootstrapAdmin } from './auth/accounts.ts';
import { DeviceCookies } from './auth/devices.ts';
import { PasskeyCeremonies } from './auth/passkeys.ts';
import { PasswordRules } from './auth/password-rules.ts';
import { hashPassword, PasswordChecker, type PasswordHasher } from './auth/passwords.ts';
import { schedulePurge } from './auth/purge-schedule.ts';
import { SECURITY_EVENT_PURGE_INTERVAL_MS, SecurityEventLog } from './auth/security-event-log.ts';
import { SESSION_PURGE_INTERVAL_MS, SessionService } from './auth/sessions.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { ClientsRepository } from './db/repositories/clients.ts';
import {
  IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
  IdempotencyKeysRepository,
} from './db/repositories/idempotency-keys.ts';
import { KnownDevicesRepository } from './db/repositories/known-devices.ts';
import { PasskeysRepository } from './db/repositories/passkeys.ts';
import { SecurityEventsRepository } from './db/repositories/security-events.ts';
import { ACCOUNT_CHANGES_CHANNEL, SessionsRepository } from './db/repositories/sessions.ts';
import { TasksRepository } from './db/repositories/tasks.ts';
import { UsersRepository } from './db/repositories/users.ts';
import { seedDemo } from './db/seed.ts';
import { DeferredCompilations, deferredSerializers } from './http/deferred-compilation.ts';
import { authorizationPlugin } from './http/plugins/authorization.ts';
import { csrfPlugin } from './http/plugins/csrf.ts';
import { databaseOutagePlugin } from './http/plugins/database-outage.ts';
import { registerDocs } from './http/plugins/docs.ts';
import { clientErrorHandler, frameworkErrors, registerErrorHandlers } from './http/plugins/error-handler.ts';
import { idempotencyPlugin, repeatOf } from './http/plugins/idempotency.ts';
import { metricsPlugin } from './http/plugins/metrics.ts';
import { portalPlugin } from './http/plugins/portal.ts';
import { rateLimitPlugin } from './http/plugins/rate-limit.ts';
import { securityHeadersPlugin } from './http/plugins/security-headers.ts';
import { sessionPlugin } from './http/plugins/session.ts';
import { ReadinessState } from './http/readiness.ts';
import { RequestLogController } from './http/request-log.ts';
import { accountPasswordRoutes } from './http/routes/account-password.ts';
import { accountSessionRoutes } from './http/routes/account-sessions.ts';
import { adminRoutes } from './http/routes/admin.ts';
import { adminClientRoutes } from './http/routes/admin-clients.ts';
import { adminPasskeyRoutes } from './http/routes/admin-passkeys.ts';
import { adminUserRoutes } from './http/routes/admin-users.ts';
import { authRoutes } from './http/routes/auth.ts';
import { healthRoutes } from './http/routes/health.ts';
import { loginPressureRoutes } from './http/routes/login-pressure.ts';
import { passkeyLoginRoutes } from './http/routes/passkey-login.ts';
import { passkeyRoutes } from './http/routes/passkeys.ts';
import { rateLimitRoutes } from './http/routes/rate-limits.ts';
import { securityEventRoutes } from './http/routes/security-events.ts';
import { taskEditRoutes } from './http/routes/task-edits.ts';
import { taskTransferRoutes } from './http/routes/task-transfer.ts';
import { taskRoutes } from './http/routes/tasks.ts';
import { SHARED_SCHEMAS } from './http/schemas.ts';
import type { Services } from './http/services.ts';
import { validatorCompiler } from './http/validation.ts';
import { BODY_LIMIT_BYTES } from './limits.ts';
import { logDestination, loggerOptions } from './logger-options.ts';
import { Login } from './login/login.ts';
import { RateLimitEngine } from './rate-limit/engine.ts';
import { createStore, type StoreStack } from './rate-limit/stores/create-store.ts';
import { TaskService } from './tasks/task-service.ts';

export interface AppOptions {
  /** Time for sessions and the rate limiter; tests pass a ManualClock. */
  readonly clock?: Clock;
  /** An open database to use (and not close); by default one is opened from the config. */
  readonly database?: Database;
  /** A store stack to use (and close); by default createStore builds one from the config. */
  readonly store?: StoreStack;
  /** What computes password hashes; tests pass one whose checks they hold and release. Default argon2id. */
  readonly hasher?: PasswordHasher;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    /** True when this start seeded the demo data into an empty database. */
    seededDemo: boolean;
    /** What this start did about the first admin (BOOTSTRAP_ADMIN_*), for the start's log. */
    bootstrapAdmin: BootstrapOutcome;
    /** The route schemas' compilations still waiting for a first use (http/deferred-compilation.ts). */
    schemaCompilations: DeferredCompilations;
  }
}

export async function buildApp(config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  const clock = options.clock ?? systemClock;
  // The dummy hash for unknown emails is made on libuv's pool while the database opens.
  const passwords = PasswordChecker.create(config.passwordHashCost, options.hasher, () => clock.now());
  const db = options.database ?? (await openDatabase(config));
  let seeded = false;
  let bootstrap: BootstrapOutcome = 'admin-exists';
  const hash = (password: string) => hashPassword(password, config.passwordHashCost);
  // One logger for the app and the store stack, which is built first (its readiness is a service).
  const logSettings = { level: config.logLevel, production: config.env === 'production' };
  // A development terminal's pretty lines go through pino-pretty's transport, every other line
  // through pino's stdout destination (logDestination()).
  const pinoOptions = loggerOptions(logSettings);
  const logger = pinoOptions.transport ? pino(pinoOptions) : pino(pinoOptions, logDestination());
  // The one rule for every password an account is given (docs/rules.md#accounts).
  const passwordRules = new PasswordRules({
    breachApi: config.passwordBreachApi.url,
    breachApiRequired: config.passwordBreachApi.required,
    onBreachApiTrouble: (error) =>
      logger.warn({ err: error }, 'the breached-password API did not answer: the password was let through'),
  });
  await migrate(db, async (connection) => {
    if (config.seedDemo) seeded = await seedDemo(connection, hash);
    bootstrap = await bootstrapAdmin(connection, config.bootstrapAdmin, {
      clock,
      instance: config.instanceId,
      hashPassword: hash,
      rules: passwordRules,
    });
  });
  const sessionsRepository = new SessionsRepository(db);
  const storeOptions = { redis: config.redis, failureMode: config.rateLimits.storeFailure };
  const stack = options.store ?? (await createStore(storeOptions, clock, logger));
  const passwordChecker = await passwords;
  const users = new UsersRepository(db);
  // Unknown emails are checked at the costs stored, dormant accounts' older ones included.
  const dummyKey = createHmac('sha256', config.sessionSecret).update('tp-dummy-hash').digest();
  await passwordChecker.useStoredCosts(await users.hashParameterCounts(), dummyKey);
  const securityEvents = new SecurityEventLog({
    repository: new SecurityEventsRepository(db),
    clock,
    instance: config.instanceId,
    retentionMs: config.securityEventRetentionMs,
    // Writes start only after a request reported an event, so `app` exists by then.
    onError: (error, lostEvents) => app.log.error({ err: error, lostEvents }, 'security events not stored'),
  });
  const devices = new DeviceCookies({ secret: config.sessionSecret, ttlMs: config.deviceCookieTtlMs, clock });
  const rateLimit = new RateLimitEngine(config.rateLimits, stack.store, { clock, log: logger });
  const passkeys = new PasskeysRepository(db);
  // Challenges live with the budgets (Redis when the fleet shares one): any instance takes them.
  const ceremonies = new PasskeyCeremonies(stack.store);
  const login = new Login({
    gate: config.loginGate,
    initialCheckMs: passwordChecker.bootCheckMs,
    secret: config.sessionSecret,
    instance: config.instanceId,
    clock,
    engine: rateLimit,
    // Challenge ids are claimed where the budgets are: shared by the fleet when Redis is configured.
    claims: stack.store,
    events: securityEvents,
    accounts: users,
    passwords: passwordChecker,
    devices,
    passkeys,
    ceremonies,
  });
  const services: Services = {
    config,
    clock,
    db,
    users,
    tasks: new TasksRepository(db),
    taskService: new TaskService({ db, clock }),
    idempotencyKeys: new IdempotencyKeysRepository(db),
    clients: new ClientsRepository(db),
    sessions: new SessionService(sessionsRepository, {
      secret: config.sessionSecret,
      ttlMs: config.sessionTtlMs,
      cacheMs: config.sessionCacheMs,
      clock,
      // Requests start only once `app` exists.
      onTouchError: (error) => app.log.warn({ err: error }, "a session's last use was not written"),
    }),
    passwords: passwordChecker,
    passwordRules,
    login,
    devices,
    rateLimit,
    passkeys,
    ceremonies,
    securityEvents,
    // The database and the store stack's checks (Redis), shared by /readyz and /metrics.
    readiness: new ReadinessState(db, stack.readiness, clock),
  };

  const trustProxy = config.trustProxy;
  const schemaCompilations = new DeferredCompilations();
  const app = Fastify({
    schemaController: { compilersFactory: { buildSerializer: deferredSerializers(schemaCompilations) } },
    loggerInstance: logger as FastifyBaseLogger,
    logController: new RequestLogController(),
    bodyLimit: BODY_LIMIT_BYTES,
    // request.ip (the rate limiter's client address, the log's), request.protocol and request.host
    // (the service's own origin, http/origin.ts) follow TRUST_PROXY. A hop count is a function: Fastify refuses to trust a bare number.
    trustProxy:
      typeof trustProxy === 'number'
        ? (_address: string, hop: number) => hop < trustProxy
        : trustProxy && [...trustProxy],
    requestIdHeader: 'x-request-id',
    genReqId: requestIds(),
    return503OnClosing: true,
    frameworkErrors,
    clientErrorHandler,
  });
  app.decorate('services', services);
  app.decorate('seededDemo', seeded);
  app.decorate('bootstrapAdmin', bootstrap);
  app.decorate('schemaCompilations', schemaCompilations);
  // JSON only: any other body type is a 415, not a string for the schema to puzzle over.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler(schemaCompilations));
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  const securityEventPurge = schedulePurge(
    () => services.securityEvents.purgeExpired(),
    (error) => app.log.error({ err: error }, 'security event purge failed'),
    SECURITY_EVENT_PURGE_INTERVAL_MS,
  );
  // Every instance drops what it cached of an account as soon as any instance announces a change
  // of it (a session ended, a role changed): ended sessions end everywhere at once.
  let heard = false;
  const accountChanges = await db.listen(ACCOUNT_CHANGES_CHANNEL, {
    message(payload) {
      const userId = Number(payload);
      if (Number.isSafeInteger(userId)) services.sessions.forgetUser(userId);
    },
    state(listening) {
      services.sessions.setCoherent(listening);
      if (listening === heard) return;
      heard = listening;
      if (listening) app.log.info('hearing account changes: sessions are cached again');
      else app.log.warn('account changes unheard: every request reads its session from the database');
    },
  });
  const knownDevices = new KnownDevicesRepository(db);
  const sessionPurge = schedulePurge(
    async () =>
      (await services.sessions.purgeExpired()) +
      // A device row outlives its cookie by nothing: one whose last cookie expired goes too.
      (await knownDevices.purgeUnusedSince(clock.now() - config.deviceCookieTtlMs)),
    (error) => app.log.error({ err: error }, 'session purge failed'),
    SESSION_PURGE_INTERVAL_MS,
  );
  const idempotencyKeyPurge = schedulePurge(
    () => services.idempotencyKeys.deleteExpired(clock.now()),
    (error) => app.log.error({ err: error }, 'idempotency key purge failed'),
    IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
  );
  app.addHook('onClose', async () => {
    login.close();
    await sessionPurge.stop();
    await accountChanges.close();
    await idempotencyKeyPurge.stop();
    await securityEventPurge.stop();
    await services.securityEvents.flush();
    await stack.close();
    if (!options.database) await db.close();
  });

  // The database's outages as the error handler and the metrics see them (no hook of its own).
  await app.register(databaseOutagePlugin, { availability: db.availability, clock });
  // Each plugin adds its own hooks; the order of registration is the order of the onRequest hooks
  // (docs/architecture.md, "A request's way through the hooks").
  await app.register(securityHeadersPlugin);
  await app.register(fastifyCookie);
  await app.register(sessionPlugin, { sessions: services.sessions });
  // Before the limiter: a key is read, so that a repeat of one (held or answered) may be spared.
  await app.register(idempotencyPlugin, {
    keys: services.idempotencyKeys,
    clock,
    ttlMs: config.idempotencyTtlMs,
    holdCommittedAnswers: config.testHooks.holdCommittedAnswers,
  });
  await app.register(rateLimitPlugin, {
    engine: services.rateLimit,
    ipv6Prefix: config.rateLimits.ipv6Prefix,
    trustedNetworks: config.rateLimits.trustedNetworks,
    repeatOf,
  });
  await app.register(metricsPlugin, { stack, login, readiness: services.readiness });
  await app.register(csrfPlugin, { secret: config.sessionSecret, config });
  await app.register(authorizationPlugin);
  await registerDocs(app);

  // Handlers first: route plugins registered after them inherit them.
  registerErrorHandlers(app);
  for (const routes of [
    authRoutes,
    passkeyLoginRoutes,
    passkeyRoutes,
    taskRoutes,
    taskEditRoutes,
    taskTransferRoutes,
    adminClientRoutes,
    rateLimitRoutes,
    adminRoutes,
    adminPasskeyRoutes,
    adminUserRoutes,
    accountPasswordRoutes,
    accountSessionRoutes,
    loginPressureRoutes,
    securityEventRoutes,
    healthRoutes,
  ])
    await app.register(routes, { services });
  await app.register(portalPlugin);
  return app;
}

/**
 * Request ids unique across instances and restarts without a random UUID per request: a random
 * 96-bit prefix per process, then a counter.
 */
function requestIds(): () => string {
  const prefix = randomBytes(12).toString('base64url');
  let next = 0;
  return () => `${prefix}-${(next++).toString(36)}`;
}
