// Builds the application: stores, repositories, services, then plugins → routes → error and 404 handlers.
import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino from 'pino';
import type { BootstrapOutcome } from './accounts/bootstrap-admin.ts';
import { startBackgroundWork } from './app/background.ts';
import { createRepositories } from './app/repositories.ts';
import { createServices } from './app/services.ts';
import { openStores } from './app/stores.ts';
import { PasswordRules } from './auth/password-rules.ts';
import { PasswordChecker, type PasswordHasher } from './auth/passwords.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
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
import type { StoreStack } from './rate-limit/stores/create-store.ts';

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

const ROUTES = [
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
];

export async function buildApp(config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  const clock = options.clock ?? systemClock;
  // The dummy hash for unknown emails is made on libuv's pool while the database opens.
  const passwords = PasswordChecker.create(config.passwordHashCost, options.hasher, () => clock.now());
  const app = createServer(config);
  const logger = app.log;
  // The one rule for every password an account is given (docs/rules.md#accounts).
  const passwordRules = new PasswordRules({
    breachApi: config.passwordBreachApi.url,
    breachApiRequired: config.passwordBreachApi.required,
    onBreachApiTrouble: (error) =>
      logger.warn({ err: error }, 'the breached-password API did not answer: the password was let through'),
  });

  // Stores → repositories → services, each group built once from the one before it.
  const stores = await openStores(config, options, { clock, logger, rules: passwordRules });
  const { db, stack } = stores;
  const repositories = createRepositories(db);
  const services = await createServices({
    config,
    clock,
    stores,
    repositories,
    passwords: await passwords,
    passwordRules,
    log: logger,
  });
  app.decorate('services', services);
  app.decorate('seededDemo', stores.seededDemo);
  app.decorate('bootstrapAdmin', stores.bootstrapAdmin);
  const background = await startBackgroundWork({ config, clock, db, repositories, services, log: logger });
  app.addHook('onClose', async () => {
    services.login.close();
    await background.stop();
    await services.securityEvents.flush();
    await stack.close();
    if (!options.database) await db.close();
  });

  // JSON only: any other body type is a 415, not a string for the schema to puzzle over.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler(app.schemaCompilations));
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  // The database's outages as the error handler and the metrics see them (no hook of its own).
  await app.register(databaseOutagePlugin, { availability: db.availability, clock });
  // Each plugin adds its own hooks; the order of registration is the order of the onRequest hooks
  // (docs/architecture.md, "A request's way through the hooks").
  await app.register(securityHeadersPlugin);
  await app.register(fastifyCookie);
  await app.register(sessionPlugin, { sessions: services.sessions });
  // Before the limiter: a key is read, so that a repeat of one (held or answered) may be spared.
  await app.register(idempotencyPlugin, {
    keys: repositories.idempotencyKeys,
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
  await app.register(metricsPlugin, { stack, login: services.login, readiness: services.readiness });
  await app.register(csrfPlugin, { secret: config.sessionSecret, config });
  await app.register(authorizationPlugin);
  await registerDocs(app);

  // Handlers first: route plugins registered after them inherit them.
  registerErrorHandlers(app);
  for (const routes of ROUTES) await app.register(routes, { services });
  await app.register(portalPlugin);
  return app;
}

/** The Fastify instance with its logger, limits, proxy trust and request ids; nothing registered yet. */
function createServer(config: Config): FastifyInstance {
  // A development terminal's pretty lines go through pino-pretty's transport, every other line
  // through pino's stdout destination (logDestination()).
  const pinoOptions = loggerOptions({ level: config.logLevel, production: config.env === 'production' });
  const logger = pinoOptions.transport ? pino(pinoOptions) : pino(pinoOptions, logDestination());
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
  app.decorate('schemaCompilations', schemaCompilations);
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
