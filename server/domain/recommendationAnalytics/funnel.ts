// event_funnel of recommendations: how many users asked for recommendations, and how many sent
// events (any, and each by name), most first.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { usersByEvent } from '../searchAnalytics/store.js';
import type { RecommendationScope } from './scope.js';
import * as store from './store.js';

export async function eventFunnel(db: Knex, datasetId: string, scope: RecommendationScope): Promise<T.EventNameAndCountsResponse> {
  // As the reference: the events are counted in the date range, whatever else the filter says.
  const range = { datasetId, ...(scope.from && { from: scope.from }), ...(scope.to && { to: scope.to }) };
  const [asked, sent] = await Promise.all([store.userCount(db, datasetId, scope), usersByEvent(db, range)]);
  const counts = [
    { event_name: 'recommendation_created', event_count: asked },
    { event_name: 'all_users', event_count: sent.allUsers },
    ...sent.byName.map((e) => ({ event_name: e.name, event_count: e.users })),
  ];
  return { event_names: counts.sort((a, b) => b.event_count - a.event_count || a.event_name.localeCompare(b.event_name)) };
}
