// Reading the user's values out of a condition: each either comes back in the shape the SQL needs,
// or the request is refused with 400 naming where in the filter the bad value is.
import { badRequest } from '../../errors.js';
import { isUuid } from '../../domain/ids.js';
import { COMPARISONS, type Bound } from './sql.js';

export function fail(path: string, message: string): never {
  throw badRequest(`${path}: ${message}`);
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** The values of `match_any` / `match_all`: a non-empty list of strings and numbers. */
export function matchValues(list: unknown, path: string): (string | number)[] {
  if (!Array.isArray(list) || list.length === 0) fail(path, 'must be a non-empty list of strings or numbers');
  list.forEach((value, i) => {
    if (typeof value !== 'string' && !isFiniteNumber(value)) fail(`${path}[${i}]`, 'must be a string or a number');
  });
  return list as (string | number)[];
}

/** Match values compared with text: a number matches its decimal form (tag `2024` is matched by 2024). */
export const asTexts = (values: (string | number)[]): string[] => values.map(String);

/** Match values compared with numbers: numeric strings are accepted, other strings refused. */
export function asNumbers(values: (string | number)[], path: string): number[] {
  return values.map((value, i) => {
    const number = typeof value === 'number' ? value : value.trim() === '' ? NaN : Number(value);
    if (!Number.isFinite(number)) fail(`${path}[${i}]`, `${JSON.stringify(value)} is not a number`);
    return number;
  });
}

export function asUuids(values: (string | number)[], path: string): string[] {
  return values.map((value, i) => {
    if (typeof value !== 'string' || !isUuid(value)) fail(`${path}[${i}]`, `${JSON.stringify(value)} is not a UUID`);
    return value;
  });
}

/** The bounds of a `range` or `date_range`, at least one, each converted by `read`. */
export function bounds<V>(range: unknown, path: string, read: (value: unknown, path: string) => V): { bound: Bound; value: V }[] {
  if (!isObject(range)) fail(path, 'must be an object with gt, gte, lt or lte');
  const given = (Object.keys(COMPARISONS) as Bound[]).filter((bound) => range[bound] != null);
  if (given.length === 0) fail(path, 'give at least one of gt, gte, lt, lte');
  return given.map((bound) => ({ bound, value: read(range[bound], `${path}.${bound}`) }));
}

export function readNumber(value: unknown, path: string): number {
  if (!isFiniteNumber(value)) fail(path, `${JSON.stringify(value)} is not a number`);
  return value;
}

// `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, then `T` or a space and `HH`, `:MM`, `:SS`, `.fraction`, then an
// optional zone (only after a time, where it cannot be confused with a date's `-DD`).
const DATE_TIME = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/i;

const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/**
 * A `date_range` bound: an ISO 8601 date or date-time, or a prefix of `YYYY-MM-DD HH:MM:SS.mmm` (the
 * contract's form). A value without a zone is a UTC wall time. Returns `YYYY-MM-DD HH:MM:SS[.f]±HH:MM`,
 * which PostgreSQL reads as a `timestamptz` whatever the session's time zone or DateStyle. Checked
 * here in full (month lengths, leap years) so that a bad date is a 400, never a database error.
 */
export function readInstant(value: unknown, path: string): string {
  const refuse = () => fail(path, `${JSON.stringify(value)} is not a date or date-time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.ffffff][Z|±HH:MM])`);
  const parts = typeof value === 'string' ? DATE_TIME.exec(value.trim()) : null;
  if (!parts) return refuse();
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', fraction, zone] = parts;
  const [year, month, day] = [Number(y), Number(mo), Number(d)];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) refuse();
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) refuse();
  let offset = '+00:00';
  if (zone && zone.toUpperCase() !== 'Z') {
    const [zh, zm = '00'] = [zone.slice(1, 3), zone.slice(3).replace(':', '') || undefined];
    if (Number(zh) > 15 || Number(zm) > 59) refuse();
    offset = `${zone[0]}${zh}:${zm}`;
  }
  return `${y}-${mo}-${d} ${h}:${mi}:${s}${fraction ? `.${fraction}` : ''}${offset}`;
}

export interface Point {
  lat: number;
  lon: number;
}

export function readPoint(value: unknown, path: string): Point {
  if (!isObject(value)) fail(path, 'must be a point {lat, lon}');
  const { lat, lon } = value;
  if (!isFiniteNumber(lat) || lat < -90 || lat > 90) fail(`${path}.lat`, `${JSON.stringify(lat)} is not a latitude (-90 to 90)`);
  if (!isFiniteNumber(lon) || lon < -180 || lon > 180) fail(`${path}.lon`, `${JSON.stringify(lon)} is not a longitude (-180 to 180)`);
  return { lat, lon };
}
