// Parses and formats rate-limit budgets written as `<count>/<duration>` (e.g. `30/15m`).
import { parseDuration } from '../duration.ts';

/** A rate-limit budget: at most `limit` admissions in any interval of `windowMs` milliseconds. */
export interface Budget {
  readonly limit: number;
  readonly windowMs: number;
}

const BUDGET_PATTERN = /^([1-9]\d{0,8})\/(.*)$/;

export const BUDGET_FORM = '<count>/<duration>, e.g. 30/15m (count ≥ 1; duration unit ms, s, m or h)';

/** Returns the budget, or null when `text` is not of the form `<count>/<duration>`. */
export function parseBudget(text: string): Budget | null {
  const match = BUDGET_PATTERN.exec(text.trim());
  if (!match) return null;
  // A budget's units stop at hours (docs/rules.md#rate-limits).
  const windowMs = parseDuration(match[2]!, ['ms', 's', 'm', 'h']);
  // Windows beyond a year make no sense for a request budget and would overflow the stores' TTLs.
  if (windowMs === null || windowMs > 366 * 24 * 3_600_000) return null;
  return Object.freeze({ limit: Number(match[1]), windowMs });
}

/** Window length in whole seconds, as the `w` parameter of `RateLimit-Policy` wants it. */
export function windowSeconds(budget: Budget): number {
  return Math.max(1, Math.ceil(budget.windowMs / 1000));
}
