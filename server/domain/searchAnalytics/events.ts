// What users did with the results of a dataset's searches: clicks, conversions, purchases. These are
// analytics events that clients send about a search (by its id); the reports of clicks, conversion,
// revenue and the event funnel read them here. The service has no analytics events table yet (no
// operation records such events), so there are none to read: every count is 0, and no search was
// clicked. When events are recorded, these reads are the only code to change.
import type { Knex } from 'knex';
import type * as T from '../../../generated/client/types.gen.js';
import type { Scope } from './scope.js';

/** Clicks on the results of the scope's searches, per bucket (start in ms). */
export async function clicksByBucket(_scope: Scope, _granularity: T.Granularity): Promise<Map<number, number>> {
  return new Map();
}

/** Conversion events attributed to the scope's searches, per bucket. */
export async function conversionsByBucket(_scope: Scope, _granularity: T.Granularity): Promise<Map<number, number>> {
  return new Map();
}

/** Revenue of purchases per bucket: those attributed to a search (`direct`), or the others. */
export async function revenueByBucket(_scope: Scope, _granularity: T.Granularity, _direct: boolean): Promise<Map<number, number>> {
  return new Map();
}

/** How many users sent any event, and how many sent each named event. */
export async function usersByEvent(_scope: Scope): Promise<{ allUsers: number; byName: { name: string; users: number }[] }> {
  return { allUsers: 0, byName: [] };
}

/**
 * Narrows a query of search_queries to the searches with clicks (`hasClicks` true) or without
 * (false): with no clicks recorded, the first are none and the second all.
 */
export function whereClicked(query: Knex.QueryBuilder, hasClicks: boolean): void {
  if (hasClicks) query.whereRaw('false');
}
