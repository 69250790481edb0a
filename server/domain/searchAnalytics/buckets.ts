// The buckets of a graph: UTC seconds, minutes, hours, days or months, every one from the first to
// the last, so that a bucket without searches shows as 0 rather than as a gap. No I/O here.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';
import { timestamp } from '../../format.js';
import type { Bound } from '../dateRange.js';

/** The most buckets one graph may have. */
export const MAX_BUCKETS = 10_000;

const MS: Record<Exclude<T.Granularity, 'month'>, number> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

export function granularityOf(requested: T.Granularity | null | undefined): T.Granularity {
  return requested ?? 'hour';
}

/** The start of the bucket holding `at` (ms since the epoch). */
export function bucketStart(at: number, granularity: T.Granularity): number {
  if (granularity === 'month') {
    const date = new Date(at);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
  return Math.floor(at / MS[granularity]) * MS[granularity];
}

export function nextBucket(start: number, granularity: T.Granularity): number {
  if (granularity === 'month') {
    const date = new Date(start);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
  return start + MS[granularity];
}

/**
 * The first and last bucket of a graph: those of the range's ends, or, for an end not given, of the
 * first search counted and of now (or of the last search counted, if later). Null when there is
 * nothing to show: no start and no searches, or a range that ends before it starts.
 */
export function graphSpan(
  range: { from?: Bound<Date>; to?: Bound<Date> },
  counted: number[],
  granularity: T.Granularity,
  now: number,
): { first: number; last: number } | null {
  const earliest = counted.length ? Math.min(...counted) : undefined;
  const latest = counted.length ? Math.max(...counted) : undefined;
  const start = range.from ? range.from.value.getTime() : earliest;
  if (start === undefined) return null;
  // The last instant of an exclusive end is (to the millisecond) just before it.
  const end = range.to ? range.to.value.getTime() - (range.to.inclusive ? 0 : 1) : Math.max(now, latest ?? now);
  const first = bucketStart(start, granularity);
  const last = bucketStart(end, granularity);
  if (last < first) return null;
  const count = bucketCount(first, last, granularity);
  if (count > MAX_BUCKETS) {
    throw badRequest(
      `a ${granularity} graph of this range has ${count} buckets, more than ${MAX_BUCKETS}: narrow filter.date_range or choose a coarser granularity`,
    );
  }
  return { first, last };
}

function bucketCount(first: number, last: number, granularity: T.Granularity): number {
  if (granularity !== 'month') return (last - first) / MS[granularity] + 1;
  const a = new Date(first);
  const b = new Date(last);
  return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth() + 1;
}

/** The span of a graph over these series' buckets (keys: bucket starts) as of now, or null when there is nothing to show. */
export function spanOf(range: { from?: Bound<Date>; to?: Bound<Date> }, granularity: T.Granularity, ...series: Map<number, unknown>[]) {
  return graphSpan(
    range,
    series.flatMap((s) => [...s.keys()]),
    granularity,
    Date.now(),
  );
}

/** The mean of the values (0 for none). */
export const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);

/** Every bucket from `first` to `last`, each with its value, or `empty` where there is none. */
export function filled<V>(
  span: { first: number; last: number } | null,
  values: Map<number, V>,
  granularity: T.Granularity,
  empty: V,
): { time_stamp: string; point: V }[] {
  if (!span) return [];
  const points: { time_stamp: string; point: V }[] = [];
  for (let at = span.first; at <= span.last; at = nextBucket(at, granularity)) {
    points.push({ time_stamp: timestamp(new Date(at)), point: values.get(at) ?? empty });
  }
  return points;
}
