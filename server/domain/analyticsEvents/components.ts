// Reports on the events of front-end components (get_component_analytics): users, pages, components
// and how long users spend in them. The component of an event is its metadata's
// component_props.componentName. Graphs have the buckets of the search analytics graphs.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { dateBounds } from '../dateRange.js';
import { filled, granularityOf, graphSpan } from '../searchAnalytics/buckets.js';
import { offsetOf } from './filters.js';
import { type ComponentScope, componentNames, interactionTimes, topComponents, topPages, uniqueUsers } from './store.js';

export async function componentReport(db: Knex, datasetId: string, request: T.ComponentAnalytics): Promise<T.ComponentAnalyticsResponse> {
  if (request.type === 'component_names') return { component_names: await componentNames(db, datasetId, offsetOf(request.page)) };
  const scope: ComponentScope = dateBounds(request.filter?.date_range, 'filter.date_range');
  if (request.filter?.component_name != null) scope.componentName = request.filter.component_name;
  switch (request.type) {
    case 'total_unique_users': {
      const granularity = granularityOf(request.granularity);
      const users = await uniqueUsers(db, datasetId, scope, granularity);
      return { total_unique_users: users.total, points: graph(scope, users.byBucket, granularity) };
    }
    case 'top_pages':
      return { top_pages: await topPages(db, datasetId, scope, offsetOf(request.page)) };
    case 'top_components':
      return { top_components: await topComponents(db, datasetId, scope, offsetOf(request.page)) };
    case 'component_interaction_time': {
      const granularity = granularityOf(request.granularity);
      const buckets = await interactionTimes(db, datasetId, scope, granularity);
      const sessions = buckets.reduce((sum, b) => sum + b.sessions, 0);
      const seconds = buckets.reduce((sum, b) => sum + b.seconds * b.sessions, 0);
      const byBucket = new Map(buckets.map((b) => [new Date(b.bucket).getTime(), b.seconds]));
      return { avg_interaction_time: sessions ? seconds / sessions : 0, points: graph(scope, byBucket, granularity) };
    }
  }
}

/** Every bucket from the range's start (or the first value) to its end (or now), 0 where there is no value. */
function graph(scope: ComponentScope, values: Map<number, number>, granularity: T.Granularity) {
  return filled(graphSpan(scope, [...values.keys()], granularity, Date.now()), values, granularity, 0);
}
