// RAG analytics (POST and PUT /api/analytics/rag) over rag_queries, topics and analytics_events:
// - the component a RAG call came from (metadata.component_props.componentName) as a generated
//   column, as analytics_events has it, so the reports' component filter reads a column;
// - indexes for each report on a large dataset: a topic's queries, rated queries, the sorted pages,
//   topics by creation, and the events about RAG queries (topic events, conversions) and the
//   follow-up questions users chose.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw(`
    alter table rag_queries
      drop column component_name,
      add column component_name text generated always as (metadata #>> '{component_props,componentName}') stored`);
  await db.raw('create index rag_queries_topics on rag_queries (dataset_id, topic_id, created_at)');
  await db.raw('create index rag_queries_rated on rag_queries (dataset_id, created_at) include (query_rating) where query_rating is not null');
  await db.raw('create index rag_queries_top_score on rag_queries (dataset_id, top_score, created_at desc, id)');
  await db.raw('create index rag_queries_hallucination_score on rag_queries (dataset_id, hallucination_score, created_at desc, id)');
  await db.raw('create index topics_created on topics (dataset_id, created_at)');
  await db.raw(`create index analytics_events_rag on analytics_events (request_id, dataset_id) include (event_name, is_conversion, created_at)
    where request_type = 'rag'`);
  await db.raw(`create index analytics_events_followups on analytics_events (dataset_id, created_at) where event_name = 'site-followup_query'`);
}

export async function down(db: Knex): Promise<void> {
  for (const index of ['analytics_events_followups', 'analytics_events_rag', 'topics_created']) await db.raw(`drop index if exists ${index}`);
  for (const index of ['hallucination_score', 'top_score', 'rated', 'topics']) await db.raw(`drop index if exists rag_queries_${index}`);
  await db.raw('alter table rag_queries drop column component_name, add column component_name text');
}
