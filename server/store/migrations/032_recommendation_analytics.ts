// Recommendation analytics over recommendation_queries: the pages by top score read an index in
// that order (lowest first, ties newest first), and the graphs, counts and users read the dataset's
// recommendations in time order from an index that also holds the columns they group and filter by,
// so PostgreSQL answers them from the index alone. It takes the place of the plain
// (dataset_id, created_at) index of migration 010, which it covers.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw('create index recommendation_queries_top_score on recommendation_queries (dataset_id, top_score, created_at desc, id)');
  await db.raw('create index recommendation_queries_time on recommendation_queries (dataset_id, created_at) include (user_id, recommendation_type, top_score)');
  await db.raw('drop index if exists recommendation_queries_dataset_id_created_at_index');
}

export async function down(db: Knex): Promise<void> {
  await db.raw('create index if not exists recommendation_queries_dataset_id_created_at_index on recommendation_queries (dataset_id, created_at)');
  await db.raw('drop index if exists recommendation_queries_time');
  await db.raw('drop index if exists recommendation_queries_top_score');
}
