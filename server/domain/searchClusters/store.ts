// The SQL of search query clusters: the recent searches clustered (search_queries), the clusters
// (search_clusters) and their searches (search_cluster_members), migration 031.
import type { Knex } from 'knex';
import type { Bound } from '../dateRange.js';
import type { SearchRow } from '../searchAnalytics/store.js';

/** Queries listed per page of a cluster (as the reference pages them). */
export const QUERIES_PAGE_SIZE = 15;

export interface ClusterRow {
  id: string;
  dataset_id: string;
  topic: string;
  density: number;
  avg_score: number;
  created_at: Date;
}

/** A distinct query text searched since the window's start, and how often. */
export interface RecentQuery {
  query: string;
  searches: number;
}

export interface NewCluster {
  id: string;
  topic: string;
  /** Its distinct query texts, each with its distance to the centroid. */
  queries: { text: string; distance: number }[];
}

/** Typing sequences are not topics: an autocomplete records every prefix typed. */
function clusteredSearches(db: Knex, since: Date): Knex.QueryBuilder {
  return db('search_queries').where('created_at', '>=', since).whereNot('kind', 'autocomplete').whereRaw(`btrim(query) <> ''`);
}

/** Live datasets with searches since `since`, and those with clusters (which a run empties when nothing was searched since). */
export async function datasetsToCluster(db: Knex, since: Date): Promise<string[]> {
  const rows: { id: string }[] = await db('datasets')
    .where('deleted', 0)
    .where((q) => q.whereIn('id', clusteredSearches(db, since).distinct('dataset_id')).orWhereIn('id', db('search_clusters').distinct('dataset_id')))
    .orderBy('id')
    .select('id');
  return rows.map((r) => r.id);
}

/** The dataset's distinct queries since `since`, the most searched first (then by text), at most `limit`. */
export async function recentQueries(db: Knex, datasetId: string, since: Date, limit: number): Promise<RecentQuery[]> {
  const rows: { query: string; searches: string | number }[] = await clusteredSearches(db, since)
    .where('dataset_id', datasetId)
    .groupBy('query')
    .orderByRaw('count(*) desc, query')
    .limit(limit)
    .select('query', db.raw('count(*) as searches'));
  return rows.map((r) => ({ query: r.query, searches: Number(r.searches) }));
}

/**
 * Replaces the dataset's clusters with these, in one transaction: every search since `since`
 * whose query a cluster holds becomes its member, and a cluster's density and average score are
 * its members'. The dataset's row is locked first, so two runs of one dataset write one after the
 * other. False when the dataset is gone (nothing written).
 */
export async function replaceClusters(db: Knex, datasetId: string, since: Date, clusters: NewCluster[]): Promise<boolean> {
  return db.transaction(async (tx) => {
    const live = await tx('datasets').where({ id: datasetId, deleted: 0 }).forNoKeyUpdate().first('id');
    if (!live) return false;
    await tx('search_clusters').where('dataset_id', datasetId).delete();
    if (clusters.length === 0) return true;
    await tx('search_clusters').insert(clusters.map((c) => ({ id: c.id, dataset_id: datasetId, topic: c.topic, density: 0, avg_score: 0 })));
    const texts = clusters.flatMap((c) => c.queries.map((q) => q.text));
    const ids = clusters.flatMap((c) => c.queries.map(() => c.id));
    const distances = clusters.flatMap((c) => c.queries.map((q) => q.distance));
    await tx.raw(
      `insert into search_cluster_members (cluster_id, search_id, distance)
       select c.cluster_id, s.id, c.distance
       from unnest(?::text[], ?::uuid[], ?::double precision[]) as c(query, cluster_id, distance)
       join search_queries s on s.dataset_id = ? and s.query = c.query and s.created_at >= ? and s.kind <> 'autocomplete'`,
      [texts, ids, distances, datasetId, since],
    );
    await tx.raw(
      `update search_clusters c set density = m.searches, avg_score = m.avg_score
       from (select m.cluster_id, count(*)::integer searches, avg(s.top_score) avg_score
             from search_cluster_members m join search_queries s on s.id = m.search_id
             where m.cluster_id = any(?::uuid[]) group by m.cluster_id) m
       where c.id = m.cluster_id`,
      [clusters.map((c) => c.id)],
    );
    return true;
  });
}

/** The dataset's clusters made within the range, the densest first. */
export async function clusterTopics(db: Knex, datasetId: string, range: { from?: Bound<Date>; to?: Bound<Date> }): Promise<ClusterRow[]> {
  const query = db<ClusterRow>('search_clusters').where('dataset_id', datasetId);
  if (range.from) query.where('created_at', range.from.inclusive ? '>=' : '>', range.from.value);
  if (range.to) query.where('created_at', range.to.inclusive ? '<=' : '<', range.to.value);
  return query.orderBy([{ column: 'density', order: 'desc' }, 'topic', 'id']).select('*');
}

export async function clusterExists(db: Knex, datasetId: string, clusterId: string): Promise<boolean> {
  return !!(await db('search_clusters').where({ id: clusterId, dataset_id: datasetId }).first('id'));
}

/**
 * A page of the cluster's searches, one per distinct query and request (its newest), the nearest
 * the centroid first (then newest, then by id).
 */
export async function clusterSearches(db: Knex, datasetId: string, clusterId: string, page: number): Promise<SearchRow[]> {
  const { rows } = await db.raw(
    `select * from (
       select distinct on (s.query, s.request_params) s.*, m.distance
       from search_cluster_members m join search_queries s on s.id = m.search_id
       where m.cluster_id = ? and s.dataset_id = ?
       order by s.query, s.request_params, s.created_at desc, s.id
     ) q
     order by distance, created_at desc, id
     limit ? offset ?`,
    [clusterId, datasetId, QUERIES_PAGE_SIZE, (page - 1) * QUERIES_PAGE_SIZE],
  );
  return rows;
}
