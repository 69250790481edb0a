// Which RAG queries and which topics a RAG analytics request counts: its filter checked and made
// concrete (instants for the date range, bounds on ratings and scores). No I/O here.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { type NumberBounds, numberBounds } from '../analyticsEvents/filters.js';
import { type Bound, dateBounds } from '../dateRange.js';

export interface TimeRange {
  from?: Bound<Date>;
  to?: Bound<Date>;
}

/** RAG queries made in the range, of the kind, from the component, asking the text, rated so. */
export interface RagScope extends TimeRange {
  datasetId: string;
  ragType?: T.RagTypes;
  componentName?: string;
  /** Text the user message contains, case-insensitively. */
  query?: string;
  rating?: NumberBounds;
}

/**
 * Topics with a name, created in the range, from the component, named with the text, and with RAG
 * queries (of the kind) whose averages fall in the bounds and that events were (or were not) about.
 */
export interface TopicScope extends TimeRange {
  datasetId: string;
  ragType?: T.RagTypes;
  componentName?: string;
  /** Text the topic's name contains, case-insensitively. */
  name?: string;
  rating?: NumberBounds;
  topScore?: NumberBounds;
  hallucinationScore?: NumberBounds;
  events?: { names: string[]; inverted: boolean };
}

export function ragScopeOf(datasetId: string, filter: T.RagAnalyticsFilter | null | undefined): RagScope {
  const scope: RagScope = { datasetId, ...dateBounds(filter?.date_range, 'filter.date_range') };
  if (filter?.rag_type != null) scope.ragType = filter.rag_type;
  if (filter?.component_name != null) scope.componentName = filter.component_name;
  if (filter?.query != null && filter.query !== '') scope.query = filter.query;
  const rating = numberBounds(filter?.query_rating, 'filter.query_rating');
  if (rating) scope.rating = rating;
  return scope;
}

/** Whether the scope keeps fewer RAG queries than all those of its date range. */
export const narrowsQueries = (scope: RagScope) => [scope.ragType, scope.componentName, scope.query, scope.rating].some((c) => c !== undefined);

export function topicScopeOf(datasetId: string, filter: T.TopicAnalyticsFilter | null | undefined, events?: T.TopicEventFilter | null): TopicScope {
  const scope: TopicScope = { datasetId, ...dateBounds(filter?.date_range, 'filter.date_range') };
  if (filter?.rag_type != null) scope.ragType = filter.rag_type;
  if (filter?.component_name != null) scope.componentName = filter.component_name;
  if (filter?.query != null && filter.query !== '') scope.name = filter.query;
  const bounds = {
    rating: numberBounds(filter?.query_rating, 'filter.query_rating'),
    topScore: numberBounds(filter?.top_score, 'filter.top_score'),
    hallucinationScore: numberBounds(filter?.hallucination_score, 'filter.hallucination_score'),
  };
  for (const [key, value] of Object.entries(bounds)) if (value) scope[key as keyof typeof bounds] = value;
  // No names: no topic has such events, so only `inverted` keeps any (all of them).
  if (events) scope.events = { names: [...new Set(events.event_names)], inverted: events.inverted };
  return scope;
}
