// Durations as `<integer><unit>` (`250ms`, `15m`, `90d`): the one parser of the config's times and budgets.

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export type DurationUnit = keyof typeof UNIT_MS;

/** About 27 years: past it a lifetime is a mistake, and date arithmetic on it would leave Date's range. */
const MAX_MS = 10_000 * UNIT_MS.d;

/** The duration in ms, or null when `text` is not a positive integer with one of `units`, or too long. */
export function parseDuration(
  text: string,
  units: readonly DurationUnit[] = ['ms', 's', 'm', 'h', 'd'],
): number | null {
  const match = /^([1-9]\d{0,8})(ms|s|m|h|d)$/.exec(text);
  if (!match || !units.includes(match[2] as DurationUnit)) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2] as DurationUnit];
  return ms <= MAX_MS ? ms : null;
}
