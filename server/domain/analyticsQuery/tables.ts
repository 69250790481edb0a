// The tables a generic analytics query may read: the reference's table names mapped to ours, and
// for each the columns it shows, by the reference's names where it has one (search_queries.latency
// is our latency_ms). Nothing else is reachable: a query reads each table through a sub-select of
// these columns and the caller's dataset only (compile.ts).

export interface TableColumns {
  /** Our table. */
  table: string;
  /** Shown name → our column. */
  columns: Record<string, string>;
  /** For a table without dataset_id: the table that has it, and our column that refers to that table's id. */
  datasetOf?: { table: string; key: string };
}

const same = (...names: string[]) => Object.fromEntries(names.map((n) => [n, n]));

export const TABLES: Record<string, TableColumns> = {
  search_queries: {
    table: 'search_queries',
    columns: {
      ...same('id', 'dataset_id', 'search_type', 'query', 'request_params', 'top_score', 'results', 'user_id', 'query_rating', 'kind', 'search_method'),
      latency: 'latency_ms',
      created_at: 'created_at',
    },
  },
  rag_queries: {
    table: 'rag_queries',
    columns: same(
      'id',
      'dataset_id',
      'rag_type',
      'user_message',
      'search_id',
      'topic_id',
      'user_id',
      'llm_response',
      'results',
      'top_score',
      'hallucination_score',
      'query_rating',
      'has_clicks',
      'created_at',
    ),
  },
  recommendations: {
    table: 'recommendation_queries',
    columns: same(
      'id',
      'dataset_id',
      'recommendation_type',
      'positive_ids',
      'negative_ids',
      'positive_tracking_ids',
      'negative_tracking_ids',
      'request_params',
      'results',
      'top_score',
      'user_id',
      'created_at',
    ),
  },
  events: {
    table: 'analytics_events',
    columns: same(
      'id',
      'dataset_id',
      'event_type',
      'event_name',
      'items',
      'metadata',
      'user_id',
      'is_conversion',
      'request_id',
      'request_type',
      'location',
      'revenue',
      'position',
      'clicked_chunk_id',
      'created_at',
      'updated_at',
    ),
  },
  cluster_topics: { table: 'search_clusters', columns: same('id', 'dataset_id', 'topic', 'density', 'avg_score', 'created_at') },
  search_cluster_memberships: {
    table: 'search_cluster_members',
    columns: { search_id: 'search_id', cluster_id: 'cluster_id', distance_to_centroid: 'distance' },
    datasetOf: { table: 'search_clusters', key: 'cluster_id' },
  },
  topics: { table: 'topics', columns: { ...same('id', 'dataset_id', 'name', 'owner_id', 'created_at', 'updated_at'), topic_id: 'id' } },
  experiments: {
    table: 'experiments',
    columns: same('id', 'dataset_id', 'name', 'area', 'control_name', 'control_split', 't1_name', 't1_split', 'created_at', 'updated_at'),
  },
  experiment_user_assignments: {
    table: 'experiment_user_assignments',
    columns: same('id', 'dataset_id', 'experiment_id', 'user_id', 'treatment_name', 'created_at', 'updated_at'),
  },
};
