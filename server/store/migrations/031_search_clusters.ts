// Search query clusters (POST /api/analytics/search/cluster): the topics a dataset's recent searches
// fall into, made by the searchClusters workflow, and which searches each topic holds. A run
// replaces a dataset's clusters whole, in one transaction; a search deleted takes its memberships
// with it, a dataset its clusters.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('search_clusters', (t) => {
    t.uuid('id').primary();
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('topic').notNullable();
    t.integer('density').notNullable();
    t.double('avg_score').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['dataset_id', 'created_at']);
  });
  await db.schema.createTable('search_cluster_members', (t) => {
    t.uuid('cluster_id').notNullable().references('search_clusters.id').onDelete('CASCADE');
    t.uuid('search_id').notNullable().references('search_queries.id').onDelete('CASCADE');
    /** From the search's query to the cluster's centroid: the nearest are the most representative. */
    t.double('distance').notNullable();
    t.primary(['cluster_id', 'search_id']);
    t.index(['search_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('search_cluster_members');
  await db.schema.dropTableIfExists('search_clusters');
}
