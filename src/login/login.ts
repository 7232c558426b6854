// The login defence, built once by app.ts: what the login routes and the metrics get.
import { DeviceCookies } from '../auth/devices.ts';
import type { Clock } from '../clock.ts';
import type { UsersRepository } from '../db/repositories/users.ts';
import { normaliseEmail } from '../email.ts';
import type { RateLimitEngine } from '../rate-limit/engine.ts';
import { LOGIN_PLANS, PASSWORD_CHANGE_FAILURES } from '../rate-limit/policy.ts';
import type { SecurityEventSink } from '../security-event.ts';
import type { PasswordLoginServices } from './attempt-login.ts';
import type { PasskeyLoginServices } from './attempt-passkey-login.ts';
import { LoginFlow } from './login-flow.ts';
import { type GateState, LoginGate, type LoginGateObserver } from './login-gate.ts';
import { LoginPressure } from './login-pressure.ts';
import { type LoginPressureReport, pressureReport } from './pressure-report.ts';
import type { PasswordRecheckServices } from './recheck-password.ts';
import { type OnceClaims, WorkChallenges, type WorkRefusal } from './work-challenges.ts';

/** How often the end of a login-pressure episode is looked for when nothing else asks. */
const PRESSURE_POLL_MS = 5000;

export interface LoginOptions {
  /** LOGIN_HASH_CONCURRENCY and LOGIN_QUEUE_MAX_WAIT (config.loginGate). */
  readonly gate: { readonly concurrency: number; readonly maxWaitMs: number };
  /** What one check is taken to cost until checks are timed: the boot's dummy hash. */
  readonly initialCheckMs: number;
  /** SESSION_SECRET: the challenges' key is derived from it. */
  readonly secret: string;
  /** This instance's name, for the pressure report (the gate guards each instance's own CPUs). */
  readonly instance: string;
  readonly clock: Clock;
  /** The rate limiter whose login controls the failure flows spend. */
  readonly engine: RateLimitEngine;
  /** Where challenge ids are claimed once: the rate-limit store, shared by the fleet with Redis. */
  readonly claims: OnceClaims;
  /** Where locks, pressure episodes and cloned passkeys are recorded. */
  readonly events: SecurityEventSink;
  readonly accounts: PasswordLoginServices['accounts'] &
    PasswordRecheckServices['accounts'] &
    Pick<UsersRepository, 'deviceStanding'>;
  readonly passwords: PasswordLoginServices['passwords'];
  readonly devices: PasswordLoginServices['devices'];
  readonly passkeys: PasskeyLoginServices['passkeys'];
  readonly ceremonies: PasskeyLoginServices['ceremonies'];
}

/** What the login defence tells an observer (the metrics): the gate's events, and solutions that counted as no work. */
export interface LoginObserver extends LoginGateObserver {
  workRefused?(reason: WorkRefusal): void;
}

/** The login defence as the metrics see it: events to observe, the gate's state to read. */
export interface LoginWatch {
  observe(observer: LoginObserver): () => void;
  state(): GateState;
}

/**
 * The one home of the login defence (docs/architecture.md, "What happens when someone signs in"):
 * the routes hand `password` to attemptLogin and `passkey` to attemptPasskeyLogin, and switch on
 * the outcome; their hooks ask the flows' early looks (`password.flow`, `passkey.flow`). Nothing
 * here knows HTTP. Close it when the app closes (it polls for the end of a pressure episode).
 */
export class Login implements LoginWatch {
  /** The gate every password check at login passes (docs/rules.md#the-login-gate). */
  readonly gate: LoginGate;
  /** Whether the gate sheds now: an episode from the first shed to a quiet minute. */
  readonly pressure: LoginPressure;
  /** Proved-work challenges for the shared lane under pressure (docs/rules.md#proved-work). */
  readonly challenges: WorkChallenges;
  /** What a password sign-in runs over (attemptLogin). */
  readonly password: PasswordLoginServices;
  /** What a passkey sign-in runs over (attemptPasskeyLogin). */
  readonly passkey: PasskeyLoginServices;
  /** What the password change's check of the current password runs over (recheckPassword). */
  readonly passwordChange: PasswordRecheckServices;
  private readonly instance: string;
  private readonly maxWaitMs: number;
  private readonly engine: RateLimitEngine;
  private readonly events: SecurityEventSink;
  private readonly devices: LoginOptions['devices'];
  private readonly accounts: LoginOptions['accounts'];
  private readonly pressurePoll: ReturnType<typeof setInterval>;

  constructor(options: LoginOptions) {
    const { clock, engine, events, devices } = options;
    this.instance = options.instance;
    this.maxWaitMs = options.gate.maxWaitMs;
    this.engine = engine;
    this.events = events;
    this.devices = devices;
    this.accounts = options.accounts;
    this.gate = new LoginGate({ ...options.gate, clock, initialCheckMs: options.initialCheckMs });
    this.pressure = new LoginPressure({ clock, events });
    this.gate.observe({ shed: () => this.pressure.shed() });
    this.challenges = new WorkChallenges({ secret: options.secret, clock, claims: options.claims });
    // A request with a device cookie whose signature holds may be a known device: only the attempt,
    // which reads the account, can tell whether the cookie is that account's.
    const mayBeKnownDevice = (cookie: string | undefined) => devices.read(cookie) !== null;
    this.password = {
      gate: this.gate,
      challenges: this.challenges,
      flow: new LoginFlow({ engine, plan: LOGIN_PLANS.password, events, mayBeKnownDevice }),
      accounts: options.accounts,
      passwords: options.passwords,
      devices,
      events,
      clock,
    };
    this.passkey = {
      flow: new LoginFlow({ engine, plan: LOGIN_PLANS.passkey, events, mayBeKnownDevice }),
      passkeys: options.passkeys,
      ceremonies: options.ceremonies,
      events,
      clock,
    };
    this.passwordChange = {
      gate: this.gate,
      // A signed-in caller: no device cookie makes its check a known device's (the plan has none).
      flow: new LoginFlow({ engine, plan: PASSWORD_CHANGE_FAILURES, events, mayBeKnownDevice: () => false }),
      accounts: options.accounts,
      passwords: options.passwords,
      events,
      clock,
    };
    // The end of a pressure episode is noticed without traffic too (reads and sheds notice it as well).
    this.pressurePoll = setInterval(() => this.pressure.poll(), PRESSURE_POLL_MS).unref();
  }

  observe(observer: LoginObserver): () => void {
    const stopGate = this.gate.observe(observer);
    const stopWork = this.challenges.observe((reason) => observer.workRefused?.(reason));
    return () => {
      stopGate();
      stopWork();
    };
  }

  state(): GateState {
    return this.gate.state();
  }

  /** GET /api/admin/login-pressure's answer now. */
  report(): LoginPressureReport {
    return pressureReport(this.pressure, this.gate, { instance: this.instance, maxWaitMs: this.maxWaitMs });
  }

  /**
   * The device id of a device cookie when a sign-in to its account would be a known-device attempt,
   * else null: what GET /api/rate-limits reads the device's own budget with.
   */
  async knownDeviceId(cookie: string | undefined): Promise<string | null> {
    const claim = this.devices.read(cookie);
    if (!claim) return null;
    const standing = await this.accounts.deviceStanding(claim.userId, claim);
    return standing && DeviceCookies.known(claim, { ...standing, userId: claim.userId })
      ? claim.deviceId
      : null;
  }

  /**
   * An admin's reset of an account's login-failure counter, with its `admin-reset` event. The
   * counters only: the account's known devices stay known. Revoking them would hand the attacker
   * whose guesses locked the account the owner's own browser: ten more guesses after the reset
   * would lock the owner out everywhere (docs/rules.md#known-devices).
   */
  async resetAccountLock(email: string, actorId: number): Promise<void> {
    await this.engine.resetAccount(email);
    this.events.record({
      type: 'admin-reset',
      control: 'login-account',
      email: normaliseEmail(email),
      actorId,
    });
  }

  close(): void {
    clearInterval(this.pressurePoll);
  }
}
