// The one rule for every password an account is given (docs/rules.md#accounts): its length, not its email,
// not a common, guessable or breached one.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { OptionsGraph, ZxcvbnFactory, ZxcvbnResult } from '@zxcvbn-ts/core';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, UNSTORABLE_TEXT } from '../limits.ts';
import type { PasswordRefusal } from './password-refusals.ts';

export { PASSWORD_REFUSALS, type PasswordRefusal } from './password-refusals.ts';

/** A refused password: the reason, and what to tell the person (what is wrong, what to do instead). */
export interface Refused {
  readonly reason: PasswordRefusal;
  readonly message: string;
}

/** What to tell a person whose password was refused, by reason (`weak` and `unchanged` say more when they can). */
export const REFUSAL_MESSAGES: Readonly<Record<PasswordRefusal, string>> = {
  too_short: `Choose a longer password: at least ${MIN_PASSWORD_LENGTH} characters. A few unrelated words make one that is easy to remember.`,
  too_long: `Choose a shorter password: at most ${MAX_PASSWORD_LENGTH} characters.`,
  contains_email: 'Choose a password that does not contain your email address or the name before its @.',
  common:
    'This password is on a list of common and leaked passwords, which attackers try first. Choose another one.',
  weak: 'This password is easy to guess: attackers try patterns like it early. Choose another one: a few unrelated words make one that is hard to guess and easy to remember.',
  breached:
    'This password appears in known data breaches, which attackers try first. Choose one you have not used anywhere.',
  unchanged:
    'Choose a new password: this is the one you have now (a temporary one is known to the admin who gave it).',
};

/** `unchanged` when the new password keeps a temporary one inside it. */
export const KEEPS_TEMPORARY_MESSAGE =
  'Choose a new password that does not contain your temporary one: the admin who gave it would still know most of it.';

const refused = (reason: PasswordRefusal, message = REFUSAL_MESSAGES[reason]): Refused => ({
  reason,
  message,
});

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

/** A listed password with this many characters or more still counts when something is added around it. */
const DECORATED_BASE_MIN = 4;

/** Digits, punctuation and symbols at the end: the `Password2024!` habit (`common`). */
const TRAILING_DECORATION = /[\p{N}\p{P}\p{S}]+$/u;

/** The same, white space and invisible characters too, at either end (`weak`: `!password1234`, ` password1234`). */
const LEADING_DECORATION_ANY = /^[\p{N}\p{P}\p{S}\s\p{Default_Ignorable_Code_Point}]+/u;
const TRAILING_DECORATION_ANY = /[\p{N}\p{P}\p{S}\s\p{Default_Ignorable_Code_Point}]+$/u;

/** Characters a person cannot see: zero-width spaces and joiners, soft hyphens, format controls. */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The estimator's score a password must reach: zxcvbn's 3, "safely unguessable" (at least 10^8
 * guesses; "moderate protection from an offline slow-hash scenario"), which is what an attacker
 * holding our argon2id hashes is. Below it (10^6 to 10^8 guesses) zxcvbn calls a password safe
 * only against throttled online guessing.
 */
const MIN_SCORE = 3;

/**
 * The estimator judges the first this many characters: its matching grows faster than the length
 * (128 characters of one digit took 60 ms, 64 took 20 ms), and a password whose first 64
 * characters are hard to guess is hard to guess.
 */
const ESTIMATED_LENGTH = 64;

const comparable = (text: string) => text.normalize('NFKC').toLowerCase();

/** Code points, as a person counts characters. */
const lengthOf = (text: string) => [...text].length;

/** What is screened, loaded on the first password set and let go after IDLE_RELEASE_MS without one. */
interface Screening {
  /** The shipped list, NFKC and case-folded. */
  readonly list: ReadonlySet<string>;
  /** zxcvbn with the list, the diceware words and the keyboards. */
  readonly estimator: ZxcvbnFactory;
  /** zxcvbn with the keyboards alone: what a password's structure (repeats, sequences, walks, dates) is worth. */
  readonly patterns: ZxcvbnFactory;
}

/**
 * The list and the estimators take about 8 MB of heap, and a service sets passwords now and then:
 * they go this long after the last one, and come back in about 40 ms with the next (BENCHMARKS.md).
 */
const IDLE_RELEASE_MS = 5 * 60 * 1000;

let screening: Screening | null = null;
let release: NodeJS.Timeout | null = null;

/**
 * zxcvbn-ts' `passwords-common` list (some 49,000 entries drawn from leaked password lists) and its
 * estimator with that list, its diceware words and its keyboard layouts. The JSON files are read,
 * not required, so that nothing of them stays in the module cache once released.
 */
function loadScreening(): Screening {
  const require = createRequire(import.meta.url);
  const data = (file: string) =>
    JSON.parse(readFileSync(require.resolve(`@zxcvbn-ts/language-common/src/${file}`), 'utf8'));
  const passwords = data('passwords.json') as string[];
  const { ZxcvbnFactory: Factory } = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core');
  const graphs = data('adjacencyGraphs.json') as OptionsGraph;
  const estimator = new Factory({
    graphs,
    dictionary: { 'passwords-common': passwords, 'diceware-common': data('diceware.json') as string[] },
    maxLength: ESTIMATED_LENGTH,
  });
  const patterns = new Factory({ graphs, maxLength: ESTIMATED_LENGTH });
  return { list: new Set(passwords.map(comparable)), estimator, patterns };
}

function screeningNow(): Screening {
  screening ??= loadScreening();
  clearTimeout(release ?? undefined);
  release = setTimeout(() => {
    screening = null;
    release = null;
  }, IDLE_RELEASE_MS);
  release.unref();
  return screening;
}

/** The shipped list of common and breached passwords, case-folded (loaded on first use; see IDLE_RELEASE_MS). */
export function commonPasswordList(): ReadonlySet<string> {
  return screeningNow().list;
}

/** What the estimator's warnings mean, in our words: why the password is easy to guess. */
const WEAKNESSES: Readonly<Record<string, string>> = {
  straightRow: 'a row of keys on the keyboard is among the first things tried',
  keyPattern: 'a short pattern of keys on the keyboard is easy to guess',
  simpleRepeat: 'a character repeated, like aaa or 111, is easy to guess',
  extendedRepeat:
    'a group of characters repeated, like abcabcabc, is barely harder to guess than the group once',
  sequences: 'a sequence, like abcd or 6543, is easy to guess',
  recentYears: 'recent years are easy to guess',
  dates: 'dates are easy to guess',
  topTen: 'it is one of the most used passwords',
  topHundred: 'it is one of the most used passwords',
  common: 'it is a commonly used password',
  similarToCommon: 'it is close to a commonly used password',
  wordByItself: 'a single word is easy to guess',
  namesByThemselves: 'names on their own are easy to guess',
  commonNames: 'common names are easy to guess',
  userInputs: 'it contains something about your account',
};

const weak = (why: string): Refused =>
  refused(
    'weak',
    `This password is easy to guess: ${why}. Choose another one: a few unrelated words make one that is hard to guess and easy to remember.`,
  );

/** The estimator's verdict as a refusal: null at MIN_SCORE or above, else `weak` with its warning as the why. */
function estimated({ score, feedback }: ZxcvbnResult): Refused | null {
  if (score >= MIN_SCORE) return null;
  return weak(
    (feedback.warning && WEAKNESSES[feedback.warning]) ??
      'it is short for the patterns in it, which attackers try before random guesses',
  );
}

/**
 * `weak` for a password made of nothing but repeats, sequences, keyboard walks and dates
 * (`123456789012`, `qwertyuiop123`) and easy to guess for it: weak whether or not the list has it.
 */
function structurallyWeak(candidate: string, patterns: ZxcvbnFactory): Refused | null {
  const result = patterns.check(candidate);
  return result.sequence.some((match) => match.pattern === 'bruteforce') ? null : estimated(result);
}

/**
 * `weak`, once the list did not have the password, for one easy to guess for its length: a listed
 * password with anything around it (digits and symbols at the end alone are `common`, the habit
 * that rule names); else zxcvbn's estimate below MIN_SCORE, with its warning as the why.
 */
function weakness(candidate: string, email: string, list: ReadonlySet<string>, estimator: ZxcvbnFactory) {
  const visible = candidate.replace(INVISIBLE, '');
  const core = visible.replace(LEADING_DECORATION_ANY, '').replace(TRAILING_DECORATION_ANY, '');
  if (
    list.has(visible.trim()) ||
    (core !== candidate && lengthOf(core) >= DECORATED_BASE_MIN && list.has(core))
  )
    return weak('it is a common password with characters added around it, which attackers try too');
  const at = email.lastIndexOf('@');
  const userInputs = [email, email.slice(0, Math.max(0, at)), email.slice(at + 1)].filter(Boolean);
  return estimated(estimator.check(candidate, userInputs));
}

/**
 * The rules that need nothing but the password and the account's email, in the order a person
 * fixes them: length (in characters of the NFKC form, the one hashed), then the email, then white
 * space or invisible characters only, then a structure that is all pattern, then the list, then
 * how guessable it is. The email counts when the password equals or contains it, or its
 * local part of at least LOCAL_PART_MIN_CONTAINED characters, case-insensitively. The list counts
 * when the password is on it, or is an entry followed only by digits, punctuation and symbols.
 */
export function offlineRefusal(password: string, email: string): Refused | null {
  const hashed = password.normalize('NFKC');
  const length = lengthOf(hashed);
  if (length < MIN_PASSWORD_LENGTH) return refused('too_short');
  if (length > MAX_PASSWORD_LENGTH) return refused('too_long');
  const candidate = hashed.toLowerCase();
  const address = comparable(email.trim());
  const localPart = address.slice(0, Math.max(0, address.lastIndexOf('@')));
  if (
    (address !== '' && candidate.includes(address)) ||
    (localPart.length >= LOCAL_PART_MIN_CONTAINED && candidate.includes(localPart))
  )
    return refused('contains_email');
  if (candidate.replace(INVISIBLE, '').trim() === '')
    return weak('it is only spaces or characters that cannot be seen');
  const { list, estimator, patterns } = screeningNow();
  const structure = structurallyWeak(candidate, patterns);
  if (structure) return structure;
  if (list.has(candidate)) return refused('common');
  const base = candidate.replace(TRAILING_DECORATION, '');
  if (base !== candidate && lengthOf(base) >= DECORATED_BASE_MIN && list.has(base)) return refused('common');
  return weakness(candidate, address, list, estimator);
}

/** A password reduced to its letters and digits, NFKC and case-folded: what a person would still recognise. */
const lettersAndDigits = (text: string) => comparable(text).replace(/[^\p{L}\p{N}]/gu, '');

/**
 * `unchanged` for a change of one's own password: the new one is the current one (its NFKC form),
 * or, when the current one is temporary, contains it, ignoring case, separators and invisible
 * characters (`<temporary>!`, `MY <TEMPORARY>`): the admin who gave it would still know most of it.
 */
export function unchangedRefusal(
  newPassword: string,
  currentPassword: string,
  currentIsTemporary: boolean,
): Refused | null {
  if (newPassword.normalize('NFKC') === currentPassword.normalize('NFKC')) return refused('unchanged');
  const kept = lettersAndDigits(currentPassword);
  if (currentIsTemporary && kept !== '' && lettersAndDigits(newPassword).includes(kept))
    return refused('unchanged', KEEPS_TEMPORARY_MESSAGE);
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
  async refusal(password: string, email: string): Promise<Refused | null> {
    return offlineRefusal(password, email) ?? ((await this.breached(password)) ? refused('breached') : null);
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
