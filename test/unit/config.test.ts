// loadConfig: the contract's defaults, and one error naming every invalid variable and its expected form.
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases); // none is opened here; kept so that every test file ends the same way

const SECRET = 's'.repeat(32);

/** The problems loadConfig reports for `env`; fails the test when it does not throw a ConfigError. */
function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.ok(error.problems.every((problem) => error.message.includes(problem)));
    return error.problems;
  }
  assert.fail(`no error for ${JSON.stringify(env)}`);
}

describe('loadConfig defaults', () => {
  it('uses the defaults of the contract when nothing is set', () => {
    const config = loadConfig({});
    assert.equal(config.env, 'development');
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 3000);
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, null);
    assert.equal(config.redis.url, null);
    assert.equal(config.seedDemo, true);
    assert.equal(config.trustProxy, false);
    const {
      bulk,
      authenticated,
      unauthenticated,
      loginAccount,
      loginIp,
      loginDevice,
      passkeyOptions,
      ipv6Prefix,
      storeFailure,
    } = config.rateLimits;
    const fifteenMinutes = 15 * 60_000;
    assert.deepEqual(bulk, { limit: 30, windowMs: fifteenMinutes });
    assert.deepEqual(authenticated, { limit: 1000, windowMs: fifteenMinutes });
    assert.deepEqual(unauthenticated, { limit: 100, windowMs: fifteenMinutes });
    assert.deepEqual(loginAccount, { limit: 10, windowMs: fifteenMinutes });
    assert.deepEqual(loginIp, { limit: 100, windowMs: fifteenMinutes });
    assert.deepEqual(loginDevice, { limit: 10, windowMs: fifteenMinutes });
    assert.deepEqual(passkeyOptions, { limit: 30, windowMs: 60_000 });
    assert.equal(ipv6Prefix, 64);
    assert.equal(storeFailure, 'local');
    assert.equal(config.idempotencyTtlMs, 24 * 3_600_000);
    assert.deepEqual(config.testHooks, { holdCommittedAnswers: false });
  });

  it('accepts the test hook TEST_HOLD_COMMITTED_ANSWERS under NODE_ENV=test only', () => {
    const held = { TEST_HOLD_COMMITTED_ANSWERS: 'true' };
    assert.equal(loadConfig({ ...held, NODE_ENV: 'test' }).testHooks.holdCommittedAnswers, true);
    for (const nodeEnv of ['development', 'production']) {
      const problems = problemsOf({ ...held, NODE_ENV: nodeEnv, SESSION_SECRET: 'x'.repeat(32) });
      assert.deepEqual(problems, [
        'TEST_HOLD_COMMITTED_ANSWERS is a test hook: expected it unset unless NODE_ENV=test',
      ]);
    }
  });

  it('makes a random session secret in development, and says so', () => {
    const first = loadConfig({});
    assert.equal(first.sessionSecretGenerated, true);
    assert.ok(first.sessionSecret.length >= 32);
    assert.notEqual(loadConfig({}).sessionSecret, first.sessionSecret);
    assert.equal(loadConfig({ SESSION_SECRET: SECRET }).sessionSecretGenerated, false);
  });

  it('returns a frozen config', () => {
    const config = loadConfig({});
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.rateLimits));
    assert.ok(Object.isFrozen(config.rateLimits.bulk));
    assert.ok(Object.isFrozen(config.redis));
  });

  it('turns the demo seed off with SEED_DEMO=false', () => {
    assert.equal(loadConfig({ SEED_DEMO: 'false' }).seedDemo, false);
  });

  it('seeds no demo data under NODE_ENV=production unless SEED_DEMO=true asks for it', () => {
    const production = { NODE_ENV: 'production', SESSION_SECRET: SECRET };
    assert.equal(loadConfig(production).seedDemo, false);
    assert.equal(loadConfig({ ...production, SEED_DEMO: 'true' }).seedDemo, true);
  });
});

describe('loadConfig BOOTSTRAP_ADMIN_*', () => {
  const PASSWORD = 'twelve chars';

  it('is null when neither is set, and reads both when both are', () => {
    assert.equal(loadConfig({}).bootstrapAdmin, null);
    assert.deepEqual(
      loadConfig({ BOOTSTRAP_ADMIN_EMAIL: ' root@example.org ', BOOTSTRAP_ADMIN_PASSWORD: PASSWORD })
        .bootstrapAdmin,
      { email: 'root@example.org', password: PASSWORD },
    );
  });

  it('names each variable that is missing, too short or no email, and never prints the password', () => {
    assert.deepEqual(problemsOf({ BOOTSTRAP_ADMIN_EMAIL: 'root@example.org' }), [
      'BOOTSTRAP_ADMIN_PASSWORD is required when BOOTSTRAP_ADMIN_EMAIL is set',
    ]);
    assert.deepEqual(problemsOf({ BOOTSTRAP_ADMIN_PASSWORD: PASSWORD }), [
      'BOOTSTRAP_ADMIN_EMAIL is required when BOOTSTRAP_ADMIN_PASSWORD is set',
    ]);
    const problems = problemsOf({ BOOTSTRAP_ADMIN_EMAIL: 'root', BOOTSTRAP_ADMIN_PASSWORD: 'short-secret' });
    assert.deepEqual(problems, ['BOOTSTRAP_ADMIN_EMAIL="root" is invalid: expected an email address']);
    const tooShort = problemsOf({
      BOOTSTRAP_ADMIN_EMAIL: 'r@x.org',
      BOOTSTRAP_ADMIN_PASSWORD: 'eleven-char',
    });
    assert.deepEqual(tooShort, [
      'BOOTSTRAP_ADMIN_PASSWORD is refused (too_short): Choose a longer password: at least 12 characters. A few unrelated words make one that is easy to remember.',
    ]);
    // The password rules of every account (auth/password-rules.ts), the first admin's included.
    for (const [password, reason] of [
      ['Password1234', 'common'],
      ['iloveyou2024!', 'common'],
      ['qwerty123456', 'weak'],
      ['!password1234', 'weak'],
      ['Rootadmin-2024-x', 'contains_email'],
    ] as const)
      assert.match(
        problemsOf({
          BOOTSTRAP_ADMIN_EMAIL: 'rootadmin@example.org',
          BOOTSTRAP_ADMIN_PASSWORD: password,
        })[0] ?? '',
        new RegExp(`^BOOTSTRAP_ADMIN_PASSWORD is refused \\(${reason}\\)`),
        password,
      );
    assert.ok(!tooShort.join('\n').includes('eleven-char'));
  });

  it('refuses a password over 128 characters, or with U+0000 (which the sign-in refuses)', () => {
    const env = (password: string) => ({
      BOOTSTRAP_ADMIN_EMAIL: 'r@x.org',
      BOOTSTRAP_ADMIN_PASSWORD: password,
    });
    const withPassword = (password: string) => problemsOf(env(password));
    // Characters, as a person counts them, not bytes.
    const longest = 'copper kettle in the orchard, plum orbit lantern 47 quietly; '.padEnd(128, 'é');
    assert.equal(loadConfig(env(longest)).bootstrapAdmin?.password, longest);
    assert.deepEqual(withPassword(`${longest}é`), [
      'BOOTSTRAP_ADMIN_PASSWORD is refused (too_long): Choose a shorter password: at most 128 characters.',
    ]);
    assert.deepEqual(withPassword('twelve chars\u0000'), [
      'BOOTSTRAP_ADMIN_PASSWORD is not usable: it contains U+0000 or a lone surrogate, which the sign-in refuses',
    ]);
  });
});

describe('loadConfig rate-limit budgets', () => {
  const budgets = {
    RATE_LIMIT_BULK: 'bulk',
    RATE_LIMIT_AUTHENTICATED: 'authenticated',
    RATE_LIMIT_UNAUTHENTICATED: 'unauthenticated',
    RATE_LIMIT_LOGIN_ACCOUNT: 'loginAccount',
    RATE_LIMIT_LOGIN_IP: 'loginIp',
    RATE_LIMIT_LOGIN_DEVICE: 'loginDevice',
    RATE_LIMIT_PASSKEY_OPTIONS: 'passkeyOptions',
  } as const;

  it('reads <count>/<duration> with the units ms, s, m and h', () => {
    const cases = {
      '30/15m': [30, 900_000],
      '5/2s': [5, 2000],
      '100/1h': [100, 3_600_000],
      '7/250ms': [7, 250],
    };
    for (const [name, field] of Object.entries(budgets)) {
      for (const [text, [limit, windowMs]] of Object.entries(cases)) {
        assert.deepEqual(
          loadConfig({ [name]: text }).rateLimits[field],
          { limit, windowMs },
          `${name}=${text}`,
        );
      }
    }
  });

  it('names the variable and the expected form for every invalid budget', () => {
    const invalid = [
      '30',
      '30/',
      '/15m',
      '30/15',
      '0/15m',
      '30/0m',
      '-1/15m',
      '1.5/15m',
      '30/15d',
      '30/15M',
      'abc',
      '30 per 15m',
    ];
    for (const name of Object.keys(budgets)) {
      for (const value of invalid) {
        const problems = problemsOf({ [name]: value });
        assert.equal(problems.length, 1, `${name}=${value}`);
        assert.ok(problems[0]!.includes(name), problems[0]);
        assert.ok(problems[0]!.includes('<count>/<duration>'), problems[0]);
      }
    }
  });

  it('names RATE_LIMIT_IPV6_PREFIX and RATE_LIMIT_STORE_FAILURE when they are invalid', () => {
    for (const [name, value] of [
      ['RATE_LIMIT_IPV6_PREFIX', '0'],
      ['RATE_LIMIT_IPV6_PREFIX', '129'],
      ['RATE_LIMIT_IPV6_PREFIX', '/64'],
      ['RATE_LIMIT_STORE_FAILURE', 'sometimes'],
    ]) {
      const problems = problemsOf({ [name!]: value! });
      assert.equal(problems.length, 1);
      assert.ok(problems[0]!.includes(name!), problems[0]);
    }
    assert.equal(loadConfig({ RATE_LIMIT_IPV6_PREFIX: '56' }).rateLimits.ipv6Prefix, 56);
    for (const mode of ['local', 'open', 'closed'] as const) {
      assert.equal(loadConfig({ RATE_LIMIT_STORE_FAILURE: mode }).rateLimits.storeFailure, mode);
    }
  });

  it('reads RATE_LIMIT_TRUSTED_NETWORKS as addresses and CIDRs of both families, none by default', () => {
    assert.deepEqual(loadConfig({}).rateLimits.trustedNetworks, []);
    assert.deepEqual(
      loadConfig({ RATE_LIMIT_TRUSTED_NETWORKS: ' 203.0.113.7, 198.51.100.0/24 ,2001:db8:1::/48,::1' })
        .rateLimits.trustedNetworks,
      ['203.0.113.7', '198.51.100.0/24', '2001:db8:1::/48', '::1'],
    );
    for (const bad of [
      'office',
      '203.0.113.0/33',
      '2001:db8::/129',
      '203.0.113.0/',
      '203.0.113.0/0x8',
      '203.0.113.0/8/9',
      '203.0.113.7,,198.51.100.1',
      '203.0.113',
    ]) {
      const problems = problemsOf({ RATE_LIMIT_TRUSTED_NETWORKS: bad });
      assert.equal(problems.length, 1, bad);
      assert.match(
        problems[0]!,
        /^RATE_LIMIT_TRUSTED_NETWORKS=".*" is invalid: expected a comma list of IPv4\/IPv6 addresses and CIDRs/,
      );
    }
  });

  it('reports several invalid variables in one error', () => {
    const problems = problemsOf({
      RATE_LIMIT_BULK: 'x',
      RATE_LIMIT_LOGIN_IP: '5',
      PORT: 'eighty',
      REDIS_URL: 'http://x',
    });
    assert.equal(problems.length, 4);
    for (const name of ['RATE_LIMIT_BULK', 'RATE_LIMIT_LOGIN_IP', 'PORT', 'REDIS_URL']) {
      assert.ok(
        problems.some((problem) => problem.includes(name)),
        `${name} is named`,
      );
    }
  });
});

describe('loadConfig login gate (docs/rules.md#the-login-gate)', () => {
  it('runs as many checks as the CPUs, waits at most 1 s, and leaves libuv 4 threads beside the checks', () => {
    const { loginGate, threadPoolSize } = loadConfig({});
    assert.equal(loginGate.concurrency, availableParallelism());
    assert.equal(loginGate.maxWaitMs, 1000);
    assert.equal(threadPoolSize, availableParallelism() + 4);
  });

  it('reads LOGIN_HASH_CONCURRENCY, LOGIN_QUEUE_MAX_WAIT as a duration, and a large enough UV_THREADPOOL_SIZE', () => {
    const config = loadConfig({
      LOGIN_HASH_CONCURRENCY: '3',
      LOGIN_QUEUE_MAX_WAIT: '250ms',
      UV_THREADPOOL_SIZE: '16',
    });
    assert.deepEqual(config.loginGate, { concurrency: 3, maxWaitMs: 250 });
    assert.equal(config.threadPoolSize, 16);
    assert.equal(loadConfig({ LOGIN_HASH_CONCURRENCY: '8' }).threadPoolSize, 12);
  });

  it('names each invalid variable, and a pool too small for the checks and the files', () => {
    const problems = problemsOf({
      LOGIN_HASH_CONCURRENCY: '0',
      LOGIN_QUEUE_MAX_WAIT: '5',
    });
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /^LOGIN_HASH_CONCURRENCY="0" is invalid: expected an integer from 1 to 1020$/);
    assert.match(problems[1]!, /^LOGIN_QUEUE_MAX_WAIT="5" is invalid: expected a duration/);
    assert.match(problemsOf({ LOGIN_QUEUE_MAX_WAIT: '2m' })[0]!, /^LOGIN_QUEUE_MAX_WAIT="2m"/);
    assert.match(
      problemsOf({ LOGIN_HASH_CONCURRENCY: '4', UV_THREADPOOL_SIZE: '4' })[0]!,
      /^UV_THREADPOOL_SIZE="4" is invalid: expected an integer from 8 \(LOGIN_HASH_CONCURRENCY \+ 4\) to 1024$/,
    );
  });
});

describe('loadConfig durations', () => {
  const durations = {
    SESSION_TTL: 'sessionTtlMs',
    DEVICE_COOKIE_TTL: 'deviceCookieTtlMs',
    SESSION_CACHE_TTL: 'sessionCacheMs',
    SECURITY_EVENT_RETENTION: 'securityEventRetentionMs',
    IDEMPOTENCY_TTL: 'idempotencyTtlMs',
  } as const;

  it('reads <integer><unit> with the units ms, s, m, h and d, each variable alike', () => {
    const cases = { '250ms': 250, '2s': 2000, '30m': 1_800_000, '12h': 43_200_000, '90d': 7_776_000_000 };
    for (const [name, field] of Object.entries(durations)) {
      for (const [text, ms] of Object.entries(cases)) {
        assert.equal(loadConfig({ [name]: text })[field], ms, `${name}=${text}`);
      }
    }
    assert.equal(loadConfig({ SESSION_CACHE_TTL: '0' }).sessionCacheMs, 0, 'the cache may be off');
  });

  it('names the variable for a duration with no unit, another unit, a fraction, or over 10000 days', () => {
    for (const name of Object.keys(durations)) {
      for (const value of ['15', '0s', '1.5h', '15M', '1w', '-1m', '10001d', '1 h']) {
        const problems = problemsOf({ [name]: value });
        assert.equal(problems.length, 1, `${name}=${value}`);
        assert.ok(problems[0]!.includes(name), problems[0]);
      }
    }
  });
});

describe('loadConfig SESSION_SECRET', () => {
  it('is required when NODE_ENV=production', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    assert.ok(problems.some((problem) => problem.includes('SESSION_SECRET')));
    const config = loadConfig({ NODE_ENV: 'production', SESSION_SECRET: SECRET });
    assert.equal(config.sessionSecret, SECRET);
    assert.equal(config.sessionSecretGenerated, false);
  });

  it('must be at least 32 characters', () => {
    for (const env of ['development', 'production']) {
      const problems = problemsOf({ NODE_ENV: env, SESSION_SECRET: 'short' });
      assert.ok(problems.some((problem) => problem.includes('SESSION_SECRET')));
    }
  });
});

describe('loadConfig TRUST_PROXY', () => {
  it('trusts no proxy when unset, empty, false or 0', () => {
    for (const value of [undefined, '', 'false', '0']) {
      const env: Record<string, string> = value === undefined ? {} : { TRUST_PROXY: value };
      assert.equal(loadConfig(env).trustProxy, false, String(value));
    }
  });

  it('reads a hop count', () => {
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
    assert.equal(loadConfig({ TRUST_PROXY: '3' }).trustProxy, 3);
  });

  it('reads a comma list of addresses and CIDRs, IPv4 and IPv6', () => {
    // Which addresses the list trusts is Fastify's proxy-addr's to decide (test/http/rate-limit.test.ts).
    const trust = loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,::1,fd00::/8' }).trustProxy;
    assert.deepEqual(trust, ['10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8']);
  });

  it('names TRUST_PROXY when it is neither', () => {
    for (const value of [
      'yes',
      'true',
      '10.0.0.0/33',
      '999.1.1.1',
      '10.0.0.1/8/1',
      '10.0.0.1,,',
      'proxy.local',
    ]) {
      const problems = problemsOf({ TRUST_PROXY: value });
      assert.equal(problems.length, 1, value);
      assert.ok(problems[0]!.includes('TRUST_PROXY'), problems[0]);
    }
  });
});

describe('loadConfig service URLs', () => {
  it('accepts redis:// and rediss:// in REDIS_URL, and names REDIS_URL for any other', () => {
    assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redis.url, 'redis://127.0.0.1:6379');
    assert.equal(
      loadConfig({ REDIS_URL: 'rediss://cache.example:6380' }).redis.url,
      'rediss://cache.example:6380',
    );
    for (const value of ['http://127.0.0.1:6379', '127.0.0.1:6379', 'not a url', 'postgres://x/y']) {
      const problems = problemsOf({ REDIS_URL: value });
      assert.ok(problems[0]!.includes('REDIS_URL'), problems[0]);
    }
  });

  it('accepts postgres:// and postgresql:// in DATABASE_URL, and names DATABASE_URL for any other', () => {
    for (const url of ['postgres://user@db.example:5432/portal', 'postgresql://db.example/portal']) {
      assert.equal(loadConfig({ DATABASE_URL: url }).databaseUrl, url);
    }
    for (const value of ['mysql://db/portal', 'db.example:5432', 'redis://x', 'file:./data']) {
      const problems = problemsOf({ DATABASE_URL: value });
      assert.ok(problems[0]!.includes('DATABASE_URL'), problems[0]);
    }
  });
});

describe('loadConfig faults (docs/rules.md#faults)', () => {
  it('defaults DATABASE_STATEMENT_TIMEOUT to 5s and SHUTDOWN_TIMEOUT to 10s, and reads durations', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.databaseStatementTimeoutMs, 5_000);
    assert.equal(defaults.shutdownTimeoutMs, 10_000);
    const set = loadConfig({ DATABASE_STATEMENT_TIMEOUT: '1500ms', SHUTDOWN_TIMEOUT: '30s' });
    assert.equal(set.databaseStatementTimeoutMs, 1_500);
    assert.equal(set.shutdownTimeoutMs, 30_000);
  });

  it('names both variables and their expected form when they are not durations in range', () => {
    assert.deepEqual(problemsOf({ DATABASE_STATEMENT_TIMEOUT: '5', SHUTDOWN_TIMEOUT: '500ms' }), [
      'DATABASE_STATEMENT_TIMEOUT="5" is invalid: expected a duration from 100ms to 10m, such as 5s',
      'SHUTDOWN_TIMEOUT="500ms" is invalid: expected a duration from 1s to 10m, such as 10s',
    ]);
    assert.deepEqual(problemsOf({ DATABASE_STATEMENT_TIMEOUT: '11m' }), [
      'DATABASE_STATEMENT_TIMEOUT="11m" is invalid: expected a duration from 100ms to 10m, such as 5s',
    ]);
  });
});

describe('loadConfig METRICS_PORT and METRICS_HOST', () => {
  it('listens for /metrics on 127.0.0.1:9464 by default, elsewhere when told, and nowhere with 0', () => {
    assert.deepEqual(loadConfig({}).metrics, { host: '127.0.0.1', port: 9464 });
    assert.deepEqual(loadConfig({ METRICS_HOST: '0.0.0.0', METRICS_PORT: '9100' }).metrics, {
      host: '0.0.0.0',
      port: 9100,
    });
    assert.equal(loadConfig({ METRICS_PORT: '0' }).metrics.port, 0);
    assert.ok(Object.isFrozen(loadConfig({}).metrics));
  });

  it('names METRICS_PORT and METRICS_HOST when they are invalid, and a METRICS_PORT that is PORT', () => {
    for (const value of ['-1', '65536', '9464.5', 'metrics', ' 9464x']) {
      const problems = problemsOf({ METRICS_PORT: value });
      assert.equal(problems.length, 1, value);
      assert.match(problems[0]!, /^METRICS_PORT=.* is invalid: expected an integer from 0 to 65535/);
    }
    assert.match(problemsOf({ METRICS_HOST: '  ' })[0]!, /^METRICS_HOST=/);
    const clash = problemsOf({ PORT: '8080', METRICS_PORT: '8080' });
    assert.equal(clash.length, 1);
    assert.match(clash[0]!, /^METRICS_PORT=8080 is PORT too/);
    // PORT=0 picks a free port, which can never be METRICS_PORT's; two zeros are no clash either.
    assert.equal(loadConfig({ PORT: '0', METRICS_PORT: '0' }).metrics.port, 0);
  });
});

describe('loadConfig PUBLIC_ORIGIN', () => {
  it('is unset by default, and read as a normalized origin', () => {
    assert.equal(loadConfig({}).publicOrigin, null);
    for (const [value, origin] of [
      ['https://portal.example.com', 'https://portal.example.com'],
      ['https://Portal.Example.com/', 'https://portal.example.com'],
      ['http://localhost:8080', 'http://localhost:8080'],
      ['https://portal.example.com:443', 'https://portal.example.com'],
      ['http://[::1]:8080', 'http://[::1]:8080'],
    ]) {
      assert.equal(loadConfig({ PUBLIC_ORIGIN: value! }).publicOrigin, origin, value);
    }
  });

  it('names PUBLIC_ORIGIN for anything but scheme://host[:port]', () => {
    for (const value of [
      'portal.example.com',
      'ftp://portal.example.com',
      'https://portal.example.com/app',
      'https://portal.example.com?x=1',
      'https://portal.example.com#x',
      'https://user:pw@portal.example.com',
      'https://portal.example.com:99999',
      'https://',
      'null',
    ]) {
      const problems = problemsOf({ PUBLIC_ORIGIN: value });
      assert.equal(problems.length, 1, value);
      assert.match(problems[0]!, /^PUBLIC_ORIGIN=.* is invalid: expected an origin such as https:\/\//);
    }
  });
});

describe('loadConfig PASSWORD_BREACH_API', () => {
  it('is off by default, takes an http(s) base URL, and REQUIRED only with it', () => {
    assert.deepEqual(loadConfig({}).passwordBreachApi, { url: null, required: false });
    assert.deepEqual(
      loadConfig({
        PASSWORD_BREACH_API: 'https://api.pwnedpasswords.com',
        PASSWORD_BREACH_API_REQUIRED: 'true',
      }).passwordBreachApi,
      { url: 'https://api.pwnedpasswords.com', required: true },
    );
    assert.match(
      problemsOf({ PASSWORD_BREACH_API: 'ftp://x' })[0] ?? '',
      /^PASSWORD_BREACH_API="ftp:\/\/x" is invalid/,
    );
    assert.deepEqual(problemsOf({ PASSWORD_BREACH_API_REQUIRED: 'true' }), [
      'PASSWORD_BREACH_API_REQUIRED=true needs PASSWORD_BREACH_API: expected the base URL of a range API',
    ]);
    assert.match(
      problemsOf({ PASSWORD_BREACH_API_REQUIRED: 'maybe' })[0] ?? '',
      /PASSWORD_BREACH_API_REQUIRED/,
    );
  });
});
