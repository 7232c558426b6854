// Reads the environment once, validates every variable, and returns one frozen Config.
import { randomBytes } from 'node:crypto';
import { availableParallelism, hostname } from 'node:os';
import { hasUnstorableCharacter, offlineRefusal, UNSTORABLE_PASSWORD } from './auth/password-rules.ts';
import { parseDuration } from './duration.ts';
import { isEmailAddress } from './email.ts';
import { BUDGET_FORM, parseBudget } from './rate-limit/budget.ts';
import { parseTrustProxy, type TrustProxy } from './rate-limit/client-ip.ts';
import { CONTROL_NAMES, type ControlName, type PolicyLimits } from './rate-limit/policy.ts';
import type { RedisSettings, StoreFailureMode } from './rate-limit/stores/store.ts';
import { parseTrustedNetworks } from './rate-limit/trusted-networks.ts';

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly host: string;
  readonly port: number;
  readonly logLevel: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  /** How long one statement may run on PostgreSQL before it is cancelled and answered 503 (docs/rules.md#faults). */
  readonly databaseStatementTimeoutMs: number;
  /** How long a SIGTERM's drain may take before the process exits anyway (docs/rules.md#faults). */
  readonly shutdownTimeoutMs: number;
  /** Whether an empty database gets the demo data (SEED_DEMO; default true, false under production). */
  readonly seedDemo: boolean;
  /** The first admin, created on a start that finds no admin (BOOTSTRAP_ADMIN_*); null when not set. */
  readonly bootstrapAdmin: { readonly email: string; readonly password: string } | null;
  readonly sessionSecret: string;
  /** True when SESSION_SECRET was not given and a random one was made for this process. */
  readonly sessionSecretGenerated: boolean;
  readonly sessionTtlMs: number;
  /** Lifetime of a device cookie (docs/rules.md#known-devices). */
  readonly deviceCookieTtlMs: number;
  /** How long an instance may serve a session from its own cache before asking the database again. */
  readonly sessionCacheMs: number;
  /** argon2id's memory, in KiB, for new password hashes. */
  readonly passwordHashCost: number;
  readonly trustProxy: TrustProxy;
  /**
   * The origin browsers use for the service (PUBLIC_ORIGIN, normalized: `scheme://host[:port]`), or
   * null to derive it from each request (docs/rules.md#authentication-and-csrf, http/origin.ts).
   */
  readonly publicOrigin: string | null;
  /** The listener that serves /metrics (docs/rules.md#deployment); port 0 means none. */
  readonly metrics: { readonly host: string; readonly port: number };
  /** Names this process in security events: INSTANCE_ID, else `<hostname>:<pid>`. */
  readonly instanceId: string;
  /** How long security events are kept before the purge deletes them. */
  readonly securityEventRetentionMs: number;
  /** How long a bulk reassignment's stored answer is replayed under its Idempotency-Key (IDEMPOTENCY_TTL). */
  readonly idempotencyTtlMs: number;
  /**
   * Hooks only tests may turn on (NODE_ENV=test; under any other NODE_ENV setting one stops the
   * start). `holdCommittedAnswers` (TEST_HOLD_COMMITTED_ANSWERS=1): a keyed bulk reassignment
   * whose transaction committed logs `idempotency test hook: answer held` and never answers, so a
   * test can kill the process between the commit and the answer.
   */
  readonly testHooks: { readonly holdCommittedAnswers: boolean };
  /** The policy's budgets and shadow list, and how clients and a failing store are treated. */
  readonly rateLimits: PolicyLimits & {
    readonly ipv6Prefix: number;
    readonly storeFailure: StoreFailureMode;
    /** Networks whose clients skip the per-address controls (RATE_LIMIT_TRUSTED_NETWORKS; none by default). */
    readonly trustedNetworks: readonly string[];
  };
  /** The gate in front of every password check at login (docs/rules.md#the-login-gate). */
  readonly loginGate: {
    /** Checks that may run at once (LOGIN_HASH_CONCURRENCY, default the CPUs this process may use). */
    readonly concurrency: number;
    /** The longest a shared-lane attempt may expect to wait, or wait, for its check (LOGIN_QUEUE_MAX_WAIT). */
    readonly maxWaitMs: number;
  };
  /**
   * libuv's thread pool size for this process: UV_THREADPOOL_SIZE, else the gate's concurrency
   * plus libuv's own default of 4, so that files and DNS always have threads the checks cannot take.
   */
  readonly threadPoolSize: number;
  readonly redis: RedisSettings;
  /** The password rules' optional Pwned Passwords range API (docs/rules.md#accounts). */
  readonly passwordBreachApi: {
    /** PASSWORD_BREACH_API: its base URL, or null for the offline rules alone. */
    readonly url: string | null;
    /** PASSWORD_BREACH_API_REQUIRED: no answer refuses the change (503) instead of letting it through. */
    readonly required: boolean;
  };
}

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
    this.name = 'ConfigError';
  }
}

/** libuv's pool holds at most 1024 threads, and the checks leave some of them to files and DNS. */
const POOL_THREADS_BESIDE_CHECKS = 4;
const MAX_HASH_CONCURRENCY = 1024 - POOL_THREADS_BESIDE_CHECKS;
const DURATION_FORM = 'a duration such as 2s, 30m, 12h or 90d (unit ms, s, m, h or d)';

type Env = Readonly<Record<string, string | undefined>>;

/** Builds the Config from `env`; throws one ConfigError that names every invalid variable. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = <T>(name: string, fallback: string, parse: (v: string) => T | null, form: string): T => {
    const raw = env[name] === undefined || env[name] === '' ? fallback : (env[name] as string);
    const value = parse(raw);
    if (value === null) {
      problems.push(`${name}=${JSON.stringify(withoutPassword(raw))} is invalid: expected ${form}`);
      return undefined as T;
    }
    return value;
  };
  const optional = <T>(name: string, parse: (v: string) => T | null, form: string): T | null =>
    env[name] ? read(name, '', parse, form) : null;

  const nodeEnv = read(
    'NODE_ENV',
    'development',
    oneOf(['development', 'production', 'test'] as const),
    'development, production or test',
  );
  const secret = env.SESSION_SECRET ?? '';
  if (secret && secret.length < 32)
    problems.push('SESSION_SECRET is too short: expected at least 32 characters');
  if (!secret && nodeEnv === 'production')
    problems.push('SESSION_SECRET is required when NODE_ENV=production (at least 32 characters)');

  const hashConcurrency = read(
    'LOGIN_HASH_CONCURRENCY',
    String(Math.min(availableParallelism(), MAX_HASH_CONCURRENCY)),
    integerIn(1, MAX_HASH_CONCURRENCY),
    `an integer from 1 to ${MAX_HASH_CONCURRENCY}`,
  );
  const poolFloor = (hashConcurrency ?? 1) + POOL_THREADS_BESIDE_CHECKS;
  const threadPoolSize = read(
    'UV_THREADPOOL_SIZE',
    String(poolFloor),
    integerIn(poolFloor, 1024),
    `an integer from ${poolFloor} (LOGIN_HASH_CONCURRENCY + ${POOL_THREADS_BESIDE_CHECKS}) to 1024`,
  );

  const config: Config = {
    env: nodeEnv,
    host: read('HOST', '127.0.0.1', nonEmpty, 'a host name or address'),
    port: read('PORT', '3000', integerIn(0, 65535), 'an integer from 0 to 65535'),
    logLevel: read(
      'LOG_LEVEL',
      nodeEnv === 'test' ? 'silent' : 'info',
      oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      'fatal, error, warn, info, debug, trace or silent',
    ),
    dataDir: read('DATA_DIR', './data', nonEmpty, 'a directory path'),
    databaseUrl: optional(
      'DATABASE_URL',
      urlWith(['postgres:', 'postgresql:']),
      'postgres://user@host:port/database',
    ),
    databaseStatementTimeoutMs: read(
      'DATABASE_STATEMENT_TIMEOUT',
      '5s',
      durationIn(100, 600_000),
      'a duration from 100ms to 10m, such as 5s',
    ),
    shutdownTimeoutMs: read(
      'SHUTDOWN_TIMEOUT',
      '10s',
      durationIn(1000, 600_000),
      'a duration from 1s to 10m, such as 10s',
    ),
    // A production start never creates accounts with a published password unless told to.
    seedDemo: read('SEED_DEMO', nodeEnv === 'production' ? 'false' : 'true', boolean, 'true or false'),
    bootstrapAdmin: bootstrapAdmin(env, problems),
    sessionSecret: secret || randomBytes(32).toString('base64url'),
    sessionSecretGenerated: !secret,
    sessionTtlMs: read('SESSION_TTL', '12h', parseDuration, DURATION_FORM),
    deviceCookieTtlMs: read('DEVICE_COOKIE_TTL', '180d', parseDuration, DURATION_FORM),
    // Every instance drops an account's cached sessions when a change of it is announced, and caches
    // nothing while it cannot hear (docs/rules.md#authentication-and-csrf).
    sessionCacheMs: read(
      'SESSION_CACHE_TTL',
      env.DATABASE_URL ? '2s' : '5m',
      (v) => (v === '0' ? 0 : parseDuration(v)),
      `${DURATION_FORM}, or 0 to disable`,
    ),
    passwordHashCost: read(
      'PASSWORD_HASH_COST',
      '19456',
      integerIn(64, 4_194_304),
      'an integer from 64 to 4194304 (argon2id memory in KiB)',
    ),
    metrics: {
      host: read('METRICS_HOST', '127.0.0.1', nonEmpty, 'a host name or address'),
      port: read('METRICS_PORT', '9464', integerIn(0, 65535), 'an integer from 0 to 65535 (0: no listener)'),
    },
    trustProxy: read(
      'TRUST_PROXY',
      '',
      parseTrustProxy,
      'a hop count (e.g. 1) or a comma list of addresses/CIDRs',
    ),
    publicOrigin: optional(
      'PUBLIC_ORIGIN',
      httpOrigin,
      'an origin such as https://portal.example.com (http or https, a host, an optional port, no path)',
    ),
    instanceId: read(
      'INSTANCE_ID',
      `${hostname().replace(/[^\w.-]/g, '_')}:${process.pid}`,
      (v) => (/^[\w:.@/-]{1,128}$/.test(v) ? v : null),
      'up to 128 letters, digits, _ : . @ / -',
    ),
    securityEventRetentionMs: read('SECURITY_EVENT_RETENTION', '90d', parseDuration, DURATION_FORM),
    idempotencyTtlMs: read('IDEMPOTENCY_TTL', '24h', parseDuration, DURATION_FORM),
    testHooks: {
      holdCommittedAnswers: read('TEST_HOLD_COMMITTED_ANSWERS', 'false', boolean, 'true or false'),
    },
    rateLimits: {
      bulk: read('RATE_LIMIT_BULK', '30/15m', parseBudget, BUDGET_FORM),
      taskImport: read('RATE_LIMIT_TASK_IMPORT', '10/1h', parseBudget, BUDGET_FORM),
      authenticated: read('RATE_LIMIT_AUTHENTICATED', '1000/15m', parseBudget, BUDGET_FORM),
      unauthenticated: read('RATE_LIMIT_UNAUTHENTICATED', '100/15m', parseBudget, BUDGET_FORM),
      loginAccount: read('RATE_LIMIT_LOGIN_ACCOUNT', '10/15m', parseBudget, BUDGET_FORM),
      loginIp: read('RATE_LIMIT_LOGIN_IP', '100/15m', parseBudget, BUDGET_FORM),
      loginDevice: read('RATE_LIMIT_LOGIN_DEVICE', '10/15m', parseBudget, BUDGET_FORM),
      passkeyOptions: read('RATE_LIMIT_PASSKEY_OPTIONS', '30/1m', parseBudget, BUDGET_FORM),
      ipv6Prefix: read('RATE_LIMIT_IPV6_PREFIX', '64', integerIn(1, 128), 'an integer from 1 to 128'),
      trustedNetworks: read(
        'RATE_LIMIT_TRUSTED_NETWORKS',
        '',
        parseTrustedNetworks,
        'a comma list of IPv4/IPv6 addresses and CIDRs (e.g. 203.0.113.7, 2001:db8:1::/48), or empty for none',
      ),
      storeFailure: read(
        'RATE_LIMIT_STORE_FAILURE',
        'local',
        oneOf(['local', 'open', 'closed'] as const),
        'local, open or closed',
      ),
      shadow: read(
        'RATE_LIMIT_SHADOW',
        '',
        controlList,
        `a comma list of policy names (${CONTROL_NAMES.join(', ')}), or empty for none`,
      ),
    },
    loginGate: {
      concurrency: hashConcurrency,
      maxWaitMs: read(
        'LOGIN_QUEUE_MAX_WAIT',
        '1s',
        (v) => {
          const ms = parseDuration(v);
          return ms !== null && ms <= 60_000 ? ms : null;
        },
        'a duration from 1ms to 60s, such as 1s or 500ms',
      ),
    },
    threadPoolSize,
    passwordBreachApi: {
      url: optional(
        'PASSWORD_BREACH_API',
        urlWith(['http:', 'https:']),
        'the base URL of a Pwned Passwords range API, such as https://api.pwnedpasswords.com',
      ),
      required: read('PASSWORD_BREACH_API_REQUIRED', 'false', boolean, 'true or false'),
    },
    redis: {
      url: optional('REDIS_URL', urlWith(['redis:', 'rediss:']), 'redis://host:port or rediss://host:port'),
      clusterNodes: optional('REDIS_CLUSTER_NODES', hostPortList, 'a comma list of host:port'),
      keyPrefix: read(
        'REDIS_KEY_PREFIX',
        'tp:',
        (v) => (/^[\w:.-]{1,64}$/.test(v) ? v : null),
        'up to 64 letters, digits, _ : . -',
      ),
      commandTimeoutMs: read(
        'REDIS_COMMAND_TIMEOUT_MS',
        '100',
        integerIn(5, 10_000),
        'an integer from 5 to 10000',
      ),
    },
  };
  if (config.metrics.port !== 0 && config.metrics.port === config.port)
    problems.push(
      `METRICS_PORT=${config.port} is PORT too: expected another port, or 0 for no metrics listener`,
    );
  if (config.passwordBreachApi.required && config.passwordBreachApi.url === null)
    problems.push(
      'PASSWORD_BREACH_API_REQUIRED=true needs PASSWORD_BREACH_API: expected the base URL of a range API',
    );
  if (config.testHooks.holdCommittedAnswers && nodeEnv !== 'test')
    problems.push('TEST_HOLD_COMMITTED_ANSWERS is a test hook: expected it unset unless NODE_ENV=test');
  if (config.redis.url && config.redis.clusterNodes)
    problems.push(
      'REDIS_URL and REDIS_CLUSTER_NODES are both set: expected one of them (a server or a cluster)',
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD: both or neither; the password is never echoed. */
function bootstrapAdmin(env: Env, problems: string[]): Config['bootstrapAdmin'] {
  const email = env.BOOTSTRAP_ADMIN_EMAIL ?? '';
  const password = env.BOOTSTRAP_ADMIN_PASSWORD ?? '';
  if (!email && !password) return null;
  if (!email) problems.push('BOOTSTRAP_ADMIN_EMAIL is required when BOOTSTRAP_ADMIN_PASSWORD is set');
  else if (!isEmailAddress(email))
    problems.push(`BOOTSTRAP_ADMIN_EMAIL=${JSON.stringify(email)} is invalid: expected an email address`);
  if (!password) problems.push('BOOTSTRAP_ADMIN_PASSWORD is required when BOOTSTRAP_ADMIN_EMAIL is set');
  else if (hasUnstorableCharacter(password))
    problems.push(`BOOTSTRAP_ADMIN_PASSWORD is ${UNSTORABLE_PASSWORD}`);
  else {
    // The password rules every account's password meets (the breached-password API is asked when
    // the admin is created, auth/accounts.ts).
    const refusal = offlineRefusal(password, email);
    if (refusal !== null)
      problems.push(`BOOTSTRAP_ADMIN_PASSWORD is refused (${refusal.reason}): ${refusal.message}`);
  }
  return { email: email.trim(), password };
}

/** Hides the password of a URL-like value (`redis://:secret@host` → `redis://:***@host`) in messages. */
function withoutPassword(value: string): string {
  return value.replace(/^([a-z][\w+.-]*:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

const nonEmpty = (v: string): string | null => (v.trim() ? v.trim() : null);

function oneOf<T extends string>(values: readonly T[]) {
  return (v: string): T | null => (values.includes(v as T) ? (v as T) : null);
}

function integerIn(min: number, max: number) {
  return (v: string): number | null => {
    if (!/^\d+$/.test(v)) return null;
    const n = Number(v);
    return n >= min && n <= max ? n : null;
  };
}

/** A comma list of distinct policy names; empty means none. */
function controlList(v: string): ControlName[] | null {
  const names = v
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (!names.every((name) => (CONTROL_NAMES as readonly string[]).includes(name))) return null;
  return [...new Set(names)] as ControlName[];
}

function boolean(v: string): boolean | null {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return null;
}

function durationIn(minMs: number, maxMs: number) {
  return (v: string): number | null => {
    const ms = parseDuration(v);
    return ms !== null && ms >= minMs && ms <= maxMs ? ms : null;
  };
}

function urlWith(protocols: readonly string[]) {
  return (v: string): string | null => {
    try {
      return protocols.includes(new URL(v).protocol) ? v : null;
    } catch {
      return null;
    }
  };
}

/** An http(s) origin, `scheme://host[:port]` (a trailing slash aside), normalized as URLs do. */
function httpOrigin(v: string): string | null {
  // Checked as text first: the URL parser alone would take a path, a query or credentials.
  if (!/^https?:\/\/[^/?#@\\\s]+\/?$/i.test(v)) return null;
  try {
    return new URL(v).origin;
  } catch {
    return null;
  }
}

function hostPortList(v: string): { host: string; port: number }[] | null {
  const nodes = v.split(',').map((part) => /^([\w.-]+|\[[\da-fA-F:]+\]):(\d{1,5})$/.exec(part.trim()));
  if (nodes.some((m) => !m || Number(m[2]) > 65535)) return null;
  return nodes.map((m) => ({ host: m![1]!.replace(/^\[|\]$/g, ''), port: Number(m![2]) }));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
