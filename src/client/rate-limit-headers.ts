// Reads a response's rate-limit state: RateLimit/RateLimit-Policy, the draft-06 triple, Retry-After.
import { type Item, parseList, Token } from 'structured-headers';

/** What one response says about the control that applied to it. */
export interface RateLimitState {
  /** The policy name (`task-bulk`, …); null when only the draft-06 triple was sent. */
  readonly policy: string | null;
  /** Requests the window admits (`q`, `RateLimit-Limit`); null when not sent. */
  readonly limit: number | null;
  /** The window's length (`w`); null when not sent. */
  readonly windowSeconds: number | null;
  /** Requests that would be admitted right now (`r`, `RateLimit-Remaining`). */
  readonly remaining: number;
  /** Seconds until the caller can be admitted again, 0 if it can now (`t`, `RateLimit-Reset`). */
  readonly resetSeconds: number;
  /** `Retry-After` in seconds (429s), or null. */
  readonly retryAfter: number | null;
  /** When the response was read (ms since the epoch, this side's clock): the seconds count from here. */
  readonly receivedAt: number;
}

/** Anything with `get(name)`, such as the Fetch API's Headers. */
export interface HeaderSource {
  get(name: string): string | null;
}

/**
 * The rate-limit state of a response, or null when it carries no rate-limit headers.
 * The structured pair wins over the draft-06 triple when both are present and disagree;
 * a malformed field is ignored rather than thrown on (the other form may still be readable).
 */
export function parseRateLimit(headers: HeaderSource, now: number = Date.now()): RateLimitState | null {
  const current = firstItem(headers.get('ratelimit'));
  const policies = list(headers.get('ratelimit-policy'));
  const name = current ? itemName(current) : policies[0] ? itemName(policies[0]) : null;
  const policy = policies.find((item) => itemName(item) === name) ?? null;

  const remaining = param(current, 'r') ?? leadingInteger(headers.get('ratelimit-remaining'));
  const resetSeconds = param(current, 't') ?? leadingInteger(headers.get('ratelimit-reset'));
  if (remaining === null && resetSeconds === null) return null;
  return {
    policy: name,
    limit: param(policy, 'q') ?? leadingInteger(headers.get('ratelimit-limit')),
    windowSeconds: param(policy, 'w'),
    remaining: remaining ?? 0,
    resetSeconds: resetSeconds ?? 0,
    retryAfter: parseRetryAfter(headers.get('retry-after'), now),
    receivedAt: now,
  };
}

/** `Retry-After` as whole seconds from `now`: delta-seconds or an HTTP date; null when absent or invalid. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

function list(value: string | null): Item[] {
  if (!value) return [];
  try {
    // Inner lists are not a form any draft uses for these fields; keep plain items only.
    return parseList(value).filter((member): member is Item => !Array.isArray(member[0]));
  } catch {
    return [];
  }
}

const firstItem = (value: string | null): Item | null => list(value)[0] ?? null;

function itemName(item: Item): string | null {
  const value = item[0];
  // A name is an sf-string in the current draft and a token in some older ones.
  if (typeof value === 'string') return value;
  return value instanceof Token ? value.toString() : null;
}

function param(item: Item | null, key: string): number | null {
  const value = item?.[1].get(key);
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

/** Draft-06 values are integers; older drafts appended a policy (`30, 30;w=900`), so read the first one. */
function leadingInteger(value: string | null): number | null {
  const match = value === null ? null : /^\s*(\d+)/.exec(value);
  return match ? Number(match[1]) : null;
}
