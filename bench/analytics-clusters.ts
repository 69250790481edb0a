// Search clustering in the analytics suite: how long the searchClusters workflow takes to cluster
// one dataset's searches (100,000 by default, all within the last 7 days, the window clustered).
// Their queries come from 20 themes, each a noun with one of 50 modifiers and one of 20 endings
// (20,000 distinct queries, the head of them searched most), so the run meets the cap on distinct
// queries (MAX_QUERIES, the most searched kept). The run goes through the workflow engine, as the
// schedule starts it; checked: topics were made, and their densities count every search of the
// queries clustered.
import type { Knex } from 'knex';
import { createClient } from '../sdk/src/generated/client/index.js';
import { createDataset } from '../sdk/src/generated/sdk.gen.js';
import type { RunningService } from '../server/main.js';
import { workflowIds } from '../workflows/registry.js';
import { ADMIN_KEY } from './modes.js';
import { fmt, stopwatch } from './report.js';

export const DEFAULT_CLUSTER_SEARCHES = 100_000;

export interface ClusterBenchResult {
  searches: number;
  distinct_queries: number;
  clusters: number;
  wall_s: number;
  topics: { topic: string; density: number }[];
}

const THEMES = [
  'running shoes',
  'hiking boots',
  'rain jacket',
  'coffee grinder',
  'espresso machine',
  'chocolate cake',
  'sourdough bread',
  'income tax',
  'mortgage rate',
  'car insurance',
  'electric bike',
  'mountain tent',
  'gaming laptop',
  'wireless headphones',
  'garden hose',
  'dog food',
  'baby stroller',
  'yoga mat',
  'office chair',
  'winter tires',
];
const MODIFIERS = Array.from({ length: 50 }, (_, i) => `model${i}`);
const ENDINGS = Array.from({ length: 20 }, (_, i) => `option${i}`);

function loadStatement(datasetId: string, count: number): string {
  const list = (words: string[]) => `array[${words.map((w) => `'${w}'`).join(', ')}]`;
  return `
    insert into search_queries (id, dataset_id, search_type, query, request_params, latency_ms, top_score, results, created_at)
    select gen_random_uuid(), '${datasetId}', 'hybrid',
      (${list(THEMES)})[1 + floor(${THEMES.length} * power(random(), 2))::int] || ' ' ||
      (${list(MODIFIERS)})[1 + floor(${MODIFIERS.length} * power(random(), 2))::int] || ' ' ||
      (${list(ENDINGS)})[1 + floor(${ENDINGS.length} * power(random(), 2))::int],
      '{"search_type": "hybrid", "page_size": 10}'::jsonb, 5 + 100 * random(), random(), '{}'::uuid[],
      now() - random() * interval '6 days'
    from generate_series(1, ${count})`;
}

export async function runClusterBench(service: RunningService, organizationId: string, searches: number, seed: number, log: (line: string) => void) {
  const db: Knex = service.services.store.db;
  const admin = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
  const dataset = (
    await createDataset({ client: admin, headers: { 'SVC-Organization': organizationId }, body: { dataset_name: 'clusters' }, throwOnError: true })
  ).data;
  await db.transaction(async (trx) => {
    await trx.raw('select setseed(?)', [((seed % 997) + 3) / 999]);
    await trx.raw(loadStatement(dataset.id, searches));
  });
  const [{ n: distinct }] = (await db.raw('select count(distinct query)::int as n from search_queries where dataset_id = ?', [dataset.id])).rows;
  const clock = stopwatch();
  const handle = await service.services.workflows.run('searchClusters', {
    workflowId: workflowIds.searchClusters(dataset.id),
    input: { datasetId: dataset.id },
  });
  const run = await handle.result();
  const wallS = clock().wallMs / 1000;
  const topics: { topic: string; density: number }[] = await db('search_clusters')
    .where('dataset_id', dataset.id)
    .orderBy('density', 'desc')
    .select('topic', 'density');
  const [{ n: members }] = (
    await db.raw('select count(*)::int as n from search_cluster_members m join search_clusters c on c.id = m.cluster_id where c.dataset_id = ?', [dataset.id])
  ).rows;
  const counted = topics.reduce((sum, t) => sum + t.density, 0);
  if (run.clusters < 2 || run.clusters !== topics.length || counted !== members) {
    throw new Error(`clustering made ${run.clusters} topics (${topics.length} stored) whose densities sum to ${counted}, not their ${members} searches`);
  }
  log(`search clusters: ${fmt(searches)} searches (${fmt(distinct)} distinct queries) into ${topics.length} topics in ${fmt(wallS, 1)} s`);
  return { searches, distinct_queries: distinct, clusters: topics.length, wall_s: wallS, topics } satisfies ClusterBenchResult;
}

export function formatClusterBench(r: ClusterBenchResult): string {
  return [
    `search clusters: ${fmt(r.searches)} searches of the last 7 days, ${fmt(r.distinct_queries)} distinct queries, clustered in ${fmt(r.wall_s, 1)} s (one workflow run)`,
    `topics: ${r.topics.map((t) => `${t.topic} (${fmt(t.density)})`).join('; ')}`,
  ].join('\n');
}
