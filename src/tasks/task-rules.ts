// The field rules of a task a JSON schema cannot say: a trimmed title, a date that exists
// (docs/rules.md#tasks).

import { TITLE_MAX_LENGTH, type WritableFields } from '../domain.ts';
import { ApiError } from '../errors.ts';

/** Control characters (C0, DEL, C1): never in a title or a client's name. */
const CONTROL = /\p{Cc}/u;
/** In a description, line breaks and tabs are text; the other control characters are not. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds.
const DESCRIPTION_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A 400 VALIDATION_ERROR naming the body field, as a schema violation is answered. */
export function fieldError(field: string, problem: string): ApiError {
  return new ApiError(
    'VALIDATION_ERROR',
    { errors: [{ path: `body/${field}`, message: problem }] },
    `Invalid request: body/${field} ${problem}.`,
  );
}

/** Whether `text` (YYYY-MM-DD) names a day of the calendar, from year 1 to 9999. */
export function isCalendarDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  // Day 0 of the next month is the last day of this one (UTC: no time zone moves it).
  const date = new Date(Date.UTC(2000, month, 0));
  date.setUTCFullYear(year, month, 0);
  return day <= date.getUTCDate();
}

/** A name or title as stored: trimmed, 1 to `max` characters, no control characters; else a 400 naming `field`. */
export function checkedName(field: string, value: string, max: number): string {
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > max)
    throw fieldError(field, `must be 1 to ${max} characters once spaces around it are removed`);
  if (CONTROL.test(trimmed)) throw fieldError(field, 'must not contain control characters');
  return trimmed;
}

/**
 * The writable fields as stored, after the rules the schema cannot check: the title trimmed, the
 * description without control characters other than line breaks and tabs, the due date a day
 * that exists. Throws a 400 naming the first field that breaks one.
 */
export function checkedFields<T extends WritableFields>(fields: T): T {
  const checked = { ...fields };
  if (checked.title !== undefined) checked.title = checkedName('title', checked.title, TITLE_MAX_LENGTH);
  if (checked.description !== undefined && DESCRIPTION_CONTROL.test(checked.description))
    throw fieldError('description', 'must not contain control characters other than line breaks and tabs');
  if (checked.dueDate != null && !isCalendarDate(checked.dueDate))
    throw fieldError('dueDate', 'must be a calendar date that exists, as YYYY-MM-DD');
  return checked;
}
