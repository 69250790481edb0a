// A date range of a report's filter (`gt`, `gte`, `lt`, `lte`, each `YYYY-MM-DD HH:MM:SS.mmm` or a
// prefix of it, or ISO 8601) as instants. No I/O here.
import type * as T from '../../sdk/src/generated/types.gen.js';
import { badRequest } from '../errors.js';

/** One end of a range, and whether the value itself is in it. */
export interface Bound<V> {
  value: V;
  inclusive: boolean;
}

/** The date range as its tighter lower and upper bounds; 400 when a bound is no instant or the range is reversed. */
export function dateBounds(range: T.DateRange | null | undefined, field: string): { from?: Bound<Date>; to?: Bound<Date> } {
  const instant = (bound: 'gt' | 'gte' | 'lt' | 'lte') => {
    const value = range?.[bound];
    return value == null ? undefined : { value: parseInstant(value, `${field}.${bound}`), inclusive: bound.endsWith('e') };
  };
  const from = tighter(instant('gt'), instant('gte'), (a, b) => a > b);
  const to = tighter(instant('lt'), instant('lte'), (a, b) => a < b);
  if (from && to && from.value > to.value) {
    throw badRequest(`${field}: the range starts (${from.value.toISOString()}) after it ends (${to.value.toISOString()})`);
  }
  return { ...(from && { from }), ...(to && { to }) };
}

/** Of an exclusive and an inclusive bound on the same side, the one that lets fewer values through. */
function tighter(exclusive: Bound<Date> | undefined, inclusive: Bound<Date> | undefined, beyond: (a: Date, b: Date) => boolean): Bound<Date> | undefined {
  if (!exclusive || !inclusive) return exclusive ?? inclusive;
  return beyond(inclusive.value, exclusive.value) ? inclusive : exclusive;
}

/** Accepts `YYYY-MM-DD HH:MM:SS.mmm` or any prefix of it, or ISO 8601; zone-less values are UTC. */
export function parseInstant(value: string, field: string): Date {
  let trimmed = value.trim().replace(' ', 'T');
  if (/T\d{2}$/.test(trimmed)) trimmed += ':00'; // an hour alone is no ISO 8601 time
  const date = new Date(/(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed) || !trimmed.includes('T') ? trimmed : `${trimmed}Z`);
  if (Number.isNaN(date.getTime())) throw badRequest(`${field}: ${value} is not a timestamp (YYYY-MM-DD HH:MM:SS.mmm)`);
  return date;
}
