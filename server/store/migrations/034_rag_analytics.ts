// RAG analytics (POST and PUT /api/analytics/rag) over rag_queries, topics and analytics_events:
// - the component a RAG call came from (metadata.component_props.componentName) as a generated
//   column, as analytics_events has it, so the reports' component filter reads a column;
// - indexes for each report on a large dataset: a topic's queries, rated queries, the sorted pages,
//   topics by creation, and the events about RAG queries (topic events, conversions) and the
//   follow-up questions users chose;
// - a roll-up per topic (rag_topic_stats: its queries by kind, with the sums their averages need),
//   kept by triggers as queries are recorded, rated and deleted, so that the topic reports read a
//   row or two per topic instead of every query of it.
import type { Knex } from 'knex';

/** The roll-up rows of a set of rag_queries rows (`rows`), negated when `sign` is -1. */
const statsOf = (rows: string, sign: 1 | -1) => `
  select dataset_id, topic_id, rag_type, ${sign} * count(*) as messages, ${sign} * sum(top_score) as top_score_sum,
    ${sign} * sum(hallucination_score) as hallucination_score_sum, ${sign} * count(query_rating) as rated,
    ${sign} * coalesce(sum(query_rating), 0) as rating_sum
  from ${rows} group by 1, 2, 3`;

/** Adds roll-up rows (of statsOf) into rag_topic_stats. */
const addStats = (stats: string) => `
  insert into rag_topic_stats as s ${stats}
  on conflict (dataset_id, topic_id, rag_type) do update set
    messages = s.messages + excluded.messages, top_score_sum = s.top_score_sum + excluded.top_score_sum,
    hallucination_score_sum = s.hallucination_score_sum + excluded.hallucination_score_sum,
    rated = s.rated + excluded.rated, rating_sum = s.rating_sum + excluded.rating_sum`;

export async function up(db: Knex): Promise<void> {
  await db.raw(`
    alter table rag_queries
      drop column component_name,
      add column component_name text generated always as (metadata #>> '{component_props,componentName}') stored`);
  // The reports that scan a range of queries read only this index (user, kind, component and rating included).
  await db.raw('drop index if exists rag_queries_dataset_id_created_at_index');
  await db.raw('create index rag_queries_time on rag_queries (dataset_id, created_at) include (rag_type, user_id, component_name, query_rating)');
  await db.raw('create index rag_queries_topics on rag_queries (dataset_id, topic_id, created_at)');
  await db.raw('create index rag_queries_rated on rag_queries (dataset_id, created_at) include (query_rating) where query_rating is not null');
  await db.raw('create index rag_queries_top_score on rag_queries (dataset_id, top_score, created_at desc, id)');
  await db.raw('create index rag_queries_hallucination_score on rag_queries (dataset_id, hallucination_score, created_at desc, id)');
  await db.raw('create index topics_created on topics (dataset_id, created_at)');
  await db.raw(`create index analytics_events_rag on analytics_events (request_id, dataset_id) include (event_name, is_conversion, created_at)
    where request_type = 'rag'`);
  await db.raw(`create index analytics_events_followups on analytics_events (dataset_id, created_at) where event_name = 'site-followup_query'`);

  await db.schema.createTable('rag_topic_stats', (t) => {
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.uuid('topic_id').notNullable();
    t.text('rag_type').notNullable();
    t.bigInteger('messages').notNullable();
    t.double('top_score_sum').notNullable();
    t.double('hallucination_score_sum').notNullable();
    t.bigInteger('rated').notNullable();
    t.double('rating_sum').notNullable();
    t.primary(['dataset_id', 'topic_id', 'rag_type']);
  });
  // A dataset being deleted may have lost its roll-up rows already: deletions only update and prune.
  const prune = 'delete from rag_topic_stats where messages <= 0 and dataset_id in (select dataset_id from old_rows)';
  const subtract = `
    update rag_topic_stats s set messages = s.messages + d.messages, top_score_sum = s.top_score_sum + d.top_score_sum,
      hallucination_score_sum = s.hallucination_score_sum + d.hallucination_score_sum, rated = s.rated + d.rated, rating_sum = s.rating_sum + d.rating_sum
    from (${statsOf('old_rows', -1)}) d
    where (s.dataset_id, s.topic_id, s.rag_type) = (d.dataset_id, d.topic_id, d.rag_type)`;
  const bodies = {
    insert: `${addStats(statsOf('new_rows', 1))};`,
    delete: `${subtract}; ${prune};`,
    // A rating (or the click trigger's has_clicks) changes a row: its old self out, its new self in.
    update: `${addStats(`
      select dataset_id, topic_id, rag_type, sum(messages), sum(top_score_sum), sum(hallucination_score_sum), sum(rated), sum(rating_sum)
      from (${statsOf('old_rows', -1)} union all ${statsOf('new_rows', 1)}) as change group by 1, 2, 3`)}; ${prune};`,
  };
  const transitions = { insert: 'new table as new_rows', delete: 'old table as old_rows', update: 'old table as old_rows new table as new_rows' };
  for (const operation of ['insert', 'delete', 'update'] as const) {
    await db.raw(`
      create function rag_topic_stats_${operation}() returns trigger language plpgsql as $$
      begin
        ${bodies[operation]}
        return null;
      end $$`);
    await db.raw(`
      create trigger rag_topic_stats_${operation} after ${operation} on rag_queries
        referencing ${transitions[operation]} for each statement execute function rag_topic_stats_${operation}()`);
  }
  // The queries recorded so far.
  await db.raw(addStats(statsOf('rag_queries', 1)));
}

export async function down(db: Knex): Promise<void> {
  for (const operation of ['insert', 'delete', 'update']) {
    await db.raw(`drop trigger if exists rag_topic_stats_${operation} on rag_queries`);
    await db.raw(`drop function if exists rag_topic_stats_${operation}()`);
  }
  await db.schema.dropTableIfExists('rag_topic_stats');
  for (const index of ['analytics_events_followups', 'analytics_events_rag', 'topics_created']) await db.raw(`drop index if exists ${index}`);
  for (const index of ['hallucination_score', 'top_score', 'rated', 'topics', 'time']) await db.raw(`drop index if exists rag_queries_${index}`);
  await db.raw('create index rag_queries_dataset_id_created_at_index on rag_queries (dataset_id, created_at)');
  await db.raw('alter table rag_queries drop column component_name, add column component_name text');
}
