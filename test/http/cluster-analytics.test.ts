// Search query clusters over HTTP: searches on three separate themes, clustered by the searchClusters
// workflow started through the engine, give three topics named by their themes, holding exactly
// the searches made (not older ones, not autocompletes), with densities and average scores from the
// recorded searches; a run again replaces them; bad input is refused with {message}.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization, getClusterAnalytics, searchChunks } from '../../sdk/src/generated/sdk.gen.js';
import type { ClusterAnalytics, SearchClusterTopics } from '../../sdk/src/generated/types.gen.js';
import { workflowIds } from '../../workflows/registry.js';
import { mode, testEnvironment } from '../support/env.js';
import { ADMIN_KEY, serviceOn, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let main: string;
let other: string;
const db = () => service.services.store.db;
const ds = (id: string) => ({ 'SVC-Dataset': id });
const asked = (body: unknown) => service.request('POST', '/api/analytics/search/cluster', { headers: { authorization: ADMIN_KEY, ...ds(main) }, body });

const THEMES = {
  baking: [
    'chocolate cake recipe',
    'chocolate cake frosting',
    'easy chocolate cake',
    'chocolate cake baking time',
    'vegan chocolate cake',
    'moist chocolate cake',
  ],
  hiking: [
    'waterproof hiking boots',
    'hiking boots for women',
    'best hiking boots',
    'hiking boots size guide',
    'leather hiking boots',
    'lightweight hiking boots',
  ],
  tax: ['income tax return', 'income tax deadline', 'income tax brackets', 'file income tax online', 'income tax refund', 'state income tax'],
};
/** Searched twice more: the baking topic is the densest. */
const REPEATED = 'chocolate cake recipe';

async function search(datasetId: string, query: string): Promise<void> {
  await searchChunks({ client: service.client(), headers: ds(datasetId), body: { query, search_type: 'fulltext' }, throwOnError: true });
}

async function cluster(datasetId?: string) {
  const handle = await service.services.workflows.run('searchClusters', { workflowId: workflowIds.searchClusters(datasetId), input: { datasetId } });
  return handle.result();
}

async function report(body: ClusterAnalytics, datasetId = main): Promise<any> {
  const { data } = await getClusterAnalytics({ client: service.client(), headers: ds(datasetId), body, throwOnError: true });
  return data;
}

const topics = async (datasetId = main): Promise<SearchClusterTopics[]> => (await report({ type: 'cluster_topics' }, datasetId)).clusters;

/** The recorded searches (id, query, top score) made for the themes in the last 7 days, autocompletes aside. */
async function recentSearches(): Promise<{ id: string; query: string; top_score: number }[]> {
  return db()('search_queries')
    .where('dataset_id', main)
    .whereNot('kind', 'autocomplete')
    .where('created_at', '>=', db().raw(`now() - interval '7 days'`))
    .select('id', 'query', 'top_score');
}

beforeAll(async () => {
  service = await startTestService();
  const orgId = (await createOrganization({ client: service.client(), body: { name: 'Clusters' } })).data!.id;
  main = (await service.newDataset(orgId, 'shop')).id;
  other = (await service.newDataset(orgId, 'other')).id;
  for (const html of ['<p>Chocolate cake recipe with frosting</p>', '<p>Hiking boots, waterproof leather</p>', '<p>Income tax return deadline</p>']) {
    await createChunk({ client: service.client(), headers: ds(main), body: { chunk_html: html }, throwOnError: true });
  }
  for (const query of [...Object.values(THEMES).flat(), REPEATED, REPEATED]) await search(main, query);
  await search(other, 'chocolate cake recipe');
  await service.services.deferred.flush();
  // Older than the window, and a typing sequence: neither is clustered.
  const recorded = { search_type: 'fulltext', request_params: JSON.stringify({ search_type: 'fulltext' }), latency_ms: 5, results: [] };
  await db()('search_queries').insert([
    { id: randomUUID(), dataset_id: main, query: 'chocolate cake recipe', created_at: db().raw(`now() - interval '10 days'`), ...recorded },
    { id: randomUUID(), dataset_id: main, query: 'chocolate cak', ...recorded, search_type: 'autocomplete_fulltext' },
  ]);
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

describe('POST /api/analytics/search/cluster', () => {
  let first: SearchClusterTopics[];

  it('has no topics before a run', async () => {
    expect(await topics()).toEqual([]);
  });

  it('clusters the searches of three themes into three topics named by them', async () => {
    expect(await cluster(main)).toEqual({ datasets: 1, clusters: 3 });
    first = await topics();
    const searches = await recentSearches();
    expect(searches).toHaveLength(20);
    expect(first).toHaveLength(3);
    // The densest first: the baking theme's 8 searches, then 6 and 6.
    expect(first.map((t) => t.density)).toEqual([8, 6, 6]);
    const [baking, ...rest] = first;
    expect(baking.topic.split(', ')).toEqual(expect.arrayContaining(['chocolate', 'cake']));
    const hiking = rest.find((t) => t.topic.includes('hiking'))!;
    const tax = rest.find((t) => t.topic.includes('tax'))!;
    expect(hiking.topic.split(', ')).toEqual(expect.arrayContaining(['hiking', 'boots']));
    expect(tax.topic.split(', ')).toEqual(expect.arrayContaining(['income', 'tax']));
    for (const [topic, queries] of [
      [baking, THEMES.baking],
      [hiking, THEMES.hiking],
      [tax, THEMES.tax],
    ] as const) {
      const held = searches.filter((s) => (queries as readonly string[]).includes(s.query));
      expect(topic.dataset_id).toBe(main);
      expect(topic.avg_score).toBeCloseTo(held.reduce((sum, s) => sum + s.top_score, 0) / held.length, 6);
      const { queries: listed } = await report({ type: 'cluster_queries', cluster_id: topic.id });
      // One per distinct query and request: the repeated search is listed once, as its newest.
      expect(listed.map((q: { query: string }) => q.query).sort()).toEqual([...queries].sort());
      expect(listed.every((q: { dataset_id: string }) => q.dataset_id === main)).toBe(true);
      expect(new Set(listed.map((q: { id: string }) => q.id)).size).toBe(6);
      const members = await db()('search_cluster_members').where('cluster_id', topic.id).pluck('search_id');
      expect(members.sort()).toEqual(held.map((s) => s.id).sort());
    }
  });

  it('pages a topic by 15, page 0 as page 1', async () => {
    const [baking] = first;
    const page0 = await report({ type: 'cluster_queries', cluster_id: baking.id, page: 0 });
    expect(page0).toEqual(await report({ type: 'cluster_queries', cluster_id: baking.id, page: 1 }));
    expect(await report({ type: 'cluster_queries', cluster_id: baking.id, page: 2 })).toEqual({ queries: [] });
  });

  it('keeps topics made within the date range', async () => {
    const made = new Date(`${first[0].created_at.replace(' ', 'T')}Z`);
    const at = (ms: number) => new Date(made.getTime() + ms).toISOString();
    const within = await report({ type: 'cluster_topics', filter: { date_range: { gte: at(0), lt: at(1000) } } });
    expect(within.clusters.map((t: SearchClusterTopics) => t.id)).toEqual(first.map((t) => t.id));
    // Times are shown to the millisecond: a topic made at .203 was made before .204.
    expect(await report({ type: 'cluster_topics', filter: { date_range: { gte: at(1) } } })).toEqual({ clusters: [] });
  });

  it('replaces the topics when run again, never adds to them', async () => {
    expect(await cluster(main)).toEqual({ datasets: 1, clusters: 3 });
    const again = await topics();
    expect(again.map((t) => [t.topic, t.density, t.avg_score])).toEqual(first.map((t) => [t.topic, t.density, t.avg_score]));
    expect(again.some((t) => first.some((f) => f.id === t.id))).toBe(false);
    const count = async (rows: Knex.QueryBuilder) => Number((await rows.count({ n: '*' }).first()).n);
    expect(await count(db()('search_clusters').where('dataset_id', main))).toBe(3);
    expect(await count(db()('search_cluster_members').join('search_clusters', 'search_clusters.id', 'cluster_id').where('dataset_id', main))).toBe(20);
  });

  it('runs on schedule over every dataset searched lately', async () => {
    expect(await cluster()).toEqual({ datasets: 2, clusters: 4 });
    const [single] = await topics(other);
    expect([single.density, single.topic.split(', ').sort()]).toEqual([1, ['cake', 'chocolate', 'recipe']]);
    expect(await topics()).toHaveLength(3);
  });

  // Under Temporal the schedule is Temporal's (checked by the engine's own tests); the runner's is a row.
  it.runIf(mode === 'embedded')('is scheduled at start, its next run kept across restarts', async () => {
    const environment = await testEnvironment({ ANALYTICS_CLUSTER_INTERVAL: '6h' });
    const schedule = (s: TestService) => s.services.store.db('workflow_schedules').where('id', 'search-clusters-schedule').first();
    let restarted = await serviceOn(environment);
    const set = await schedule(restarted);
    await restarted.stop();
    expect([set.workflow, set.workflow_id, set.input, Number(set.every_ms)]).toEqual(['searchClusters', 'search-clusters', {}, 6 * 3_600_000]);
    restarted = await serviceOn(environment);
    expect((await schedule(restarted)).next_run_at).toEqual(set.next_run_at);
    await restarted.stop();
    restarted = await serviceOn({ ...environment, ANALYTICS_CLUSTER_INTERVAL: 'off' });
    expect(await schedule(restarted)).toBeUndefined();
    await restarted.stop();
  });

  it('answers 404 for a topic of another dataset or none', async () => {
    const [theirs] = await topics(other);
    const [ours] = await topics();
    for (const id of [theirs.id, first[0].id, randomUUID()]) {
      const reply = await asked({ type: 'cluster_queries', cluster_id: id });
      expect(reply).toEqual({ status: 404, body: { message: `cluster ${id} not found` } });
    }
    expect((await report({ type: 'cluster_queries', cluster_id: ours.id })).queries).not.toHaveLength(0);
  });

  it('refuses bad input with a message naming the problem', async () => {
    const refused = async (body: unknown, pattern: RegExp) => {
      const reply = await asked(body);
      expect(reply.status).toBe(400);
      expect(reply.body.message).toMatch(pattern);
    };
    await refused({ type: 'cluster_queries' }, /cluster_id/);
    await refused({ type: 'cluster_queries', cluster_id: 'not-a-uuid' }, /cluster_id/);
    await refused({ type: 'cluster_queries', cluster_id: randomUUID(), page: -1 }, /page/);
    await refused({ type: 'clusters' }, /type/);
    await refused({ type: 'cluster_topics', filter: { date_range: { gte: 'yesterday' } } }, /filter\.date_range\.gte: yesterday is not a timestamp/);
    await refused({ type: 'cluster_topics', filter: { date_range: { gte: '2026-02-01', lt: '2026-01-01' } } }, /starts .* after it ends/);
  });
});
