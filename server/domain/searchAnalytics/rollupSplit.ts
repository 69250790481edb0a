// A date range cut where the roll-ups can answer: the whole hours (or days) inside it come from
// the roll-up rows, the parts of an hour (or day) at either end from the searches themselves, so
// that a range like "the last 7 days" from now costs a few hundred roll-up rows and one partial
// day of searches. No I/O here.
import type { Bound } from '../dateRange.js';

export type RollupUnit = 'hour' | 'day';

const UNIT_MS: Record<RollupUnit, number> = { hour: 3_600_000, day: 86_400_000 };

export interface RangeSplit {
  /** Roll-up rows whose unit starts in [start, end) (an end not given is open); null when no whole unit is in range. */
  whole: { start?: Date; end?: Date } | null;
  /** The ranges of searches to read themselves, each with the scope's other conditions. */
  edges: { from?: Bound<Date>; to?: Bound<Date> }[];
}

export function splitAtUnits(range: { from?: Bound<Date>; to?: Bound<Date> }, unit: RollupUnit): RangeSplit {
  const ms = UNIT_MS[unit];
  const { from, to } = range;
  // The first whole unit starts at or after `from` (after it, when `from` is excluded and starts a unit).
  let start: number | undefined;
  if (from) {
    const at = from.value.getTime();
    start = Math.ceil(at / ms) * ms;
    if (start === at && !from.inclusive) start += ms;
  }
  // A unit is whole when it ends at or before `to`: the searches of [u, u + unit) are all before u + unit.
  const end = to ? Math.floor(to.value.getTime() / ms) * ms : undefined;
  if (start !== undefined && end !== undefined && start >= end) return { whole: null, edges: [range] };

  const edges: RangeSplit['edges'] = [];
  if (from && start !== undefined && start > from.value.getTime()) edges.push({ from, to: { value: new Date(start), inclusive: false } });
  if (to && end !== undefined && (end < to.value.getTime() || to.inclusive)) edges.push({ from: { value: new Date(end), inclusive: true }, to });
  return {
    whole: { ...(start !== undefined && { start: new Date(start) }), ...(end !== undefined && { end: new Date(end) }) },
    edges,
  };
}
