/**
 * Calendar checks for date and datetime literals. The lexer only matches their shape; a value that
 * cannot exist (2024-13-01, 2023-02-29, 25:00) must be a 400 here rather than a database error later.
 */

/** `2024-01-31`, optionally followed by `T10:00[:00[.123]]` and `Z` or `±hh:mm` (OData requires the offset). */
export const TEMPORAL_PATTERN =
  /(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,12})?)?(?:Z|[+-](\d{2}):(\d{2})))?/y;

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

function inRange(part: string | undefined, max: number): boolean {
  return part === undefined || Number(part) <= max;
}

/** True when the groups of a TEMPORAL_PATTERN match name a real instant. */
export function isValidTemporal(groups: RegExpExecArray): boolean {
  const [, yearText, monthText, dayText, hour, minute, second, offsetHour, offsetMinute] = groups;
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  // Year 0 does not exist in Postgres' calendar.
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  return (
    inRange(hour, 23) &&
    inRange(minute, 59) &&
    inRange(second, 59) &&
    inRange(offsetHour, 23) &&
    inRange(offsetMinute, 59)
  );
}
