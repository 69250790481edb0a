// Which recommendations a report counts (recommendation analytics and the CTR reports on
// recommendations): the filter checked and made concrete. No I/O here.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { numberBounds, type NumberBounds } from '../analyticsEvents/filters.js';
import { type Bound, dateBounds } from '../dateRange.js';

export interface RecommendationScope {
  /** The recommendations made at or after (`inclusive`) or after this instant. */
  from?: Bound<Date>;
  /** The recommendations made at or before (`inclusive`) or before this instant. */
  to?: Bound<Date>;
  type?: 'Chunk' | 'Group';
  topScore?: NumberBounds;
  /** `metadata.component_props.componentName` of the recommendation request. */
  componentName?: string;
}

/** The filter's scope; 400 when a range is no range. */
export function recommendationScope(filter: T.RecommendationAnalyticsFilter | null | undefined): RecommendationScope {
  const scope: RecommendationScope = dateBounds(filter?.date_range, 'filter.date_range');
  if (filter?.recommendation_type != null) scope.type = filter.recommendation_type;
  const topScore = numberBounds(filter?.top_score, 'filter.top_score');
  if (topScore) scope.topScore = topScore;
  if (filter?.component_name != null) scope.componentName = filter.component_name;
  return scope;
}
