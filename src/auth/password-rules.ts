// The one rule for every password an account is given (docs/rules.md#accounts): its length, not its email, not a common or breached one.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, UNSTORABLE_TEXT } from '../limits.ts';

/** Why a password is refused: the `reason` of 422 PASSWORD_REFUSED. */
export const PASSWORD_REFUSALS = [
  'too_short',
  'too_long',
  'contains_email',
  'common',
  'breached',
  'unchanged',
] as const;
export type PasswordRefusal = (typeof PASSWORD_REFUSALS)[number];

/** What to tell a person whose password was refused: what is wrong and what to do instead. */
export const REFUSAL_MESSAGES: Readonly<Record<PasswordRefusal, string>> = {
  too_short: `Choose a longer password: at least ${MIN_PASSWORD_LENGTH} characters. A few unrelated words make one that is easy to remember.`,
  too_long: `Choose a shorter password: at most ${MAX_PASSWORD_LENGTH} characters.`,
  contains_email: 'Choose a password that does not contain your email address or the name before its @.',
  common:
    'This password is on a list of common and leaked passwords, which attackers try first. Choose another one.',
  breached:
    'This password appears in known data breaches, which attackers try first. Choose one you have not used anywhere.',
  unchanged:
    'Choose a new password: this is the one you have now (a temporary one is known to the admin who gave it).',
};

/** Whether `password` holds a character no password may (the API's validator refuses it before any rule). */
export function hasUnstorableCharacter(password: string): boolean {
  return UNSTORABLE_TEXT.test(password);
}

/** What is wrong with such a password, after "the password is" (the command line, the first admin). */
export const UNSTORABLE_PASSWORD =
  'not usable: it contains U+0000 or a lone surrogate, which the sign-in refuses';

/**
 * A local part this long or longer may not appear anywhere in the password; a shorter one (`al`,
 * `bob`) is part of too many ordinary words to refuse, and a password of 12 characters cannot equal it.
 */
const LOCAL_PART_MIN_CONTAINED = 4;

/** A listed password with this many characters or more still counts when digits and symbols follow it. */
const DECORATED_BASE_MIN = 4;

/** Digits, punctuation and spaces at the end: the `Password2024!` habit. */
const TRAILING_DECORATION = /[\p{N}\p{P}\p{S}\s]+$/u;

const comparable = (text: string) => text.normalize('NFKC').toLowerCase();

let commonPasswords: ReadonlySet<string> | null = null;

/**
 * The shipped list of common and breached passwords (zxcvbn-ts' `passwords-common` dictionary,
 * some 49,000 entries drawn from leaked password lists), case-folded, read from its package on
 * first use and kept: every look-up after is one Set probe.
 */
export function commonPasswordList(): ReadonlySet<string> {
  if (commonPasswords === null) {
    const require = createRequire(import.meta.url);
    const list = require('@zxcvbn-ts/language-common/src/passwords.json') as string[];
    commonPasswords = new Set(list.map(comparable));
  }
  return commonPasswords;
}

/**
 * The rules that need nothing but the password and the account's email, in the order a person
 * fixes them: length (in characters, as a person counts them), then the email, then the list.
 * The email counts when the password equals or contains it, or its local part of at least
 * LOCAL_PART_MIN_CONTAINED characters, case-insensitively. The list counts when the password is
 * on it, or is an entry followed only by digits, punctuation and symbols.
 */
export function offlineRefusal(password: string, email: string): PasswordRefusal | null {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return 'too_short';
  if (length > MAX_PASSWORD_LENGTH) return 'too_long';
  const candidate = comparable(password);
  const address = comparable(email.trim());
  const localPart = address.slice(0, Math.max(0, address.lastIndexOf('@')));
  if (
    (address !== '' && candidate.includes(address)) ||
    (localPart.length >= LOCAL_PART_MIN_CONTAINED && candidate.includes(localPart))
  )
    return 'contains_email';
  const list = commonPasswordList();
  if (list.has(candidate)) return 'common';
  const base = candidate.replace(TRAILING_DECORATION, '');
  if (base !== candidate && [...base].length >= DECORATED_BASE_MIN && list.has(base)) return 'common';
  return null;
}

export interface PasswordRulesOptions {
  /**
   * PASSWORD_BREACH_API: the base URL of a Pwned Passwords range API (`<base>/range/<5 hex>`
   * answers `SUFFIX:COUNT` lines), or null for the offline rules alone.
   */
  readonly breachApi: string | null;
  /** PASSWORD_BREACH_API_REQUIRED: without an answer, refuse to set the password (else set it, and warn). */
  readonly breachApiRequired: boolean;
  /** How long the range API may take; 2 s unless a test says less. */
  readonly breachTimeoutMs?: number;
  readonly fetch?: typeof fetch;
  /** Told when the range API did not answer in time or answered nonsense (the caller logs a warning). */
  readonly onBreachApiTrouble?: (error: unknown) => void;
}

/** A password the range API could not vouch for, with PASSWORD_BREACH_API_REQUIRED set: nothing may change. */
export class PasswordCheckUnavailableError extends Error {
  constructor(options?: ErrorOptions) {
    super('the breached-password check did not answer', options);
    this.name = 'PasswordCheckUnavailableError';
  }
}

export const BREACH_API_TIMEOUT_MS = 2000;

/** Every rule, the breached-password API's among them when one is configured. */
export class PasswordRules {
  private readonly options: PasswordRulesOptions;

  constructor(options: PasswordRulesOptions) {
    this.options = options;
  }

  /**
   * Why `password` may not be the password of the account `email`, or null when it may. Throws
   * PasswordCheckUnavailableError when the range API is required and does not answer.
   */
  async refusal(password: string, email: string): Promise<PasswordRefusal | null> {
    return offlineRefusal(password, email) ?? ((await this.breached(password)) ? 'breached' : null);
  }

  /**
   * Whether the range API lists the password (k-anonymity: only the first 5 hex characters of its
   * SHA-1 leave this process, and padding is asked for so the answer's size says nothing either).
   * Without an answer within the budget: false and a warning, or PasswordCheckUnavailableError.
   */
  private async breached(password: string): Promise<boolean> {
    const { breachApi, fetch: send = globalThis.fetch } = this.options;
    if (breachApi === null) return false;
    const hash = createHash('sha1').update(password.normalize('NFKC')).digest('hex').toUpperCase();
    const prefix = hash.slice(0, 5);
    const suffix = hash.slice(5);
    try {
      const response = await send(`${breachApi.replace(/\/+$/, '')}/range/${prefix}`, {
        headers: { 'add-padding': 'true' },
        signal: AbortSignal.timeout(this.options.breachTimeoutMs ?? BREACH_API_TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`the breached-password API answered ${response.status}`);
      const body = await response.text();
      for (const line of body.split('\n')) {
        const [lineSuffix, count] = line.trim().split(':');
        if (lineSuffix?.toUpperCase() === suffix) return Number(count) > 0; // padding lines count 0
      }
      return false;
    } catch (error) {
      if (this.options.breachApiRequired) throw new PasswordCheckUnavailableError({ cause: error });
      this.options.onBreachApiTrouble?.(error);
      return false;
    }
  }
}
