// No key of one organization can read or change anything of another: every operation of the
// contract is called with organization B's owner key against organization A's data, once with A's
// scoping headers and once with B's own headers but A's ids in the path, and must be refused.
// Afterwards A's data is exactly as it was.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../generated/handlers.js';
import { seedChunk, seedDataset, seedFile, seedGroup, seedRagQuery, seedRecommendation } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
const a = {} as Record<string, string>;
const b = {} as Record<string, string>;
const SHARED_TRACKING_ID = 'shared-tracking-id';

/** Operations that act only on the caller itself, or need no key at all, so there is nothing of A to address. */
const callerOnly = new Set([
  'get_me',
  'get_user_api_keys',
  'create_organization',
  'create_api_only_user',
  ...Object.entries(operations)
    .filter(([, op]) => op.role === null)
    .map(([id]) => id),
]);

async function setUpOrganization(target: Record<string, string>, name: string) {
  const db = service.services.store.db;
  const org = await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name } });
  target.organization_id = org.body.id;
  const key = await service.request('POST', '/api/organization/api_key', {
    headers: { authorization: ADMIN_KEY, 'SVC-Organization': target.organization_id },
    body: { name: 'owner', role: 2 },
  });
  target.key = key.body.api_key;
  target.api_key_id = (await db('api_keys').where({ organization_id: target.organization_id }).first('id')).id;
  const dataset = await seedDataset(db, target.organization_id, { tracking_id: SHARED_TRACKING_ID });
  target.dataset_id = dataset.id;
  target.chunk_id = await seedChunk(db, dataset.id, { tracking_id: SHARED_TRACKING_ID });
  target.group_id = await seedGroup(db, dataset.id, { tracking_id: SHARED_TRACKING_ID });
  target.file_id = await seedFile(db, dataset.id);
  target.rag_query_id = await seedRagQuery(db, dataset.id);
  target.recommendation_id = await seedRecommendation(db, dataset.id);
  const [event] = await db('analytics_events')
    .insert({ id: randomUUID(), dataset_id: dataset.id, event_type: 'view', event_name: 'view', items: [], is_conversion: false })
    .returning('id');
  target.event_id = event.id;
  const [topic] = await db('topics')
    .insert({ dataset_id: dataset.id, owner_id: `${name}-owner`, name: 'Topic' })
    .returning('id');
  target.topic_id = topic.id;
  target.owner_id = `${name}-owner`;
  target.messages_topic_id = topic.id;
  const [message] = await db('messages').insert({ topic_id: topic.id, dataset_id: dataset.id, sort_order: 0, role: 'user', content: 'Hello' }).returning('id');
  target.message_id = message.id;
  const [crawl] = await db('crawl_requests')
    .insert({ dataset_id: dataset.id, url: 'https://example.com/', status: JSON.stringify('Completed') })
    .returning('id');
  target.crawl_id = crawl.id;
  const [experiment] = await db('experiments')
    .insert({ dataset_id: dataset.id, name: 'Experiment', area: 'search', control_name: 'control', control_split: 0.5, t1_name: 't1', t1_split: 0.5 })
    .returning('id');
  target.experiment_id = experiment.id;
  await db('experiment_user_assignments').insert({ experiment_id: experiment.id, dataset_id: dataset.id, user_id: `${name}-user`, treatment_name: 't1' });
  const [search] = await db('search_queries')
    .insert({
      id: randomUUID(),
      dataset_id: dataset.id,
      search_type: 'hybrid',
      query: 'hello',
      request_params: { search_type: 'hybrid' },
      latency_ms: 5,
      results: [],
    })
    .returning('id');
  target.search_id = search.id;
  const clusterId = randomUUID();
  await db('search_clusters').insert({ id: clusterId, dataset_id: dataset.id, topic: 'hello', density: 1, avg_score: 0 });
  await db('search_cluster_members').insert({ cluster_id: clusterId, search_id: search.id, distance: 0 });
  target.cluster_id = clusterId;
  if (await db.schema.hasTable('invitations')) {
    const [invitation] = await db('invitations')
      .insert({ organization_id: target.organization_id, email: `${name}@example.com`, role: 0 })
      .returning('id');
    target.invitation_id = invitation.id;
  }
}

/** A's rows, to prove nothing of A changed. */
async function snapshotOf(organizationId: string): Promise<unknown> {
  await service.services.deferred.flush(); // analytics rows are written after the answer
  const db = service.services.store.db;
  const datasets = await db('datasets').where({ organization_id: organizationId }).orderBy('id');
  const ids = datasets.map((d) => d.id);
  const tables: Record<string, unknown> = {
    organization: await db('organizations').where({ id: organizationId }),
    subscription: await db('subscriptions').where({ organization_id: organizationId }),
    api_keys: await db('api_keys').where({ organization_id: organizationId }).orderBy('id'),
    datasets,
    chunks: await db('chunks').whereIn('dataset_id', ids).orderBy('id'),
    groups: await db('chunk_groups').whereIn('dataset_id', ids).orderBy('id'),
    bookmarks: await db('chunk_group_bookmarks')
      .join('chunk_groups', 'chunk_groups.id', 'chunk_group_bookmarks.group_id')
      .whereIn('chunk_groups.dataset_id', ids)
      .orderBy('chunk_id'),
    files: await db('files').whereIn('dataset_id', ids).orderBy('id'),
    topics: await db('topics').whereIn('dataset_id', ids).orderBy('id'),
    messages: await db('messages').whereIn('dataset_id', ids).orderBy('id'),
    crawls: await db('crawl_requests').whereIn('dataset_id', ids).orderBy('id'),
    rag_queries: await db('rag_queries').whereIn('dataset_id', ids).orderBy('id'),
    analytics_events: await db('analytics_events').whereIn('dataset_id', ids).orderBy('id'),
    experiments: await db('experiments').whereIn('dataset_id', ids).orderBy('id'),
    experiment_user_assignments: await db('experiment_user_assignments').whereIn('dataset_id', ids).orderBy('id'),
    search_queries: await db('search_queries').whereIn('dataset_id', ids).orderBy('id'),
    search_clusters: await db('search_clusters').whereIn('dataset_id', ids).orderBy('id'),
  };
  for (const [table, column] of [
    ['user_organizations', 'organization_id'],
    ['invitations', 'organization_id'],
  ] as const) {
    if (await db.schema.hasTable(table))
      tables[table] = await db(table)
        .where({ [column]: organizationId })
        .orderBy('id');
  }
  return JSON.parse(JSON.stringify(tables));
}

function fillPath(path: string, ids: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (name === 'page') return '1';
    if (name.endsWith('tracking_id')) return SHARED_TRACKING_ID;
    const value = ids[name];
    if (!value) throw new Error(`the access matrix does not know how to fill {${name}}: add it to setUpOrganization`);
    return value;
  });
}

/** Bodies that pass validation, so refusals by handlers (not only by the validator) are exercised. */
function bodyFor(operationId: string, ids: Record<string, string>): unknown {
  const bodies: Record<string, unknown> = {
    add_chunk_to_group: { chunk_id: ids.chunk_id },
    add_chunk_to_group_by_tracking_id: { chunk_id: ids.chunk_id },
    get_rag_analytics: { type: 'rag_query_details', request_id: ids.rag_query_id },
    set_rag_query_rating: { query_id: ids.rag_query_id, rating: 1 },
    send_event_data: { event_type: 'view', event_name: 'intruder', items: [], request: { request_id: ids.rag_query_id, request_type: 'rag' } },
    send_ctr_data: { request_id: ids.rag_query_id, ctr_type: 'rag', position: 0, clicked_chunk_id: ids.chunk_id },
    get_ctr_analytics: { type: 'search_ctr_metrics' },
    get_component_analytics: { type: 'component_names' },
    get_search_analytics: { type: 'query_details', request_id: ids.search_id },
    get_cluster_analytics: { type: 'cluster_queries', cluster_id: ids.cluster_id },
    get_recommendation_analytics: { type: 'query_details', request_id: ids.recommendation_id },
    get_top_datasets: { type: 'search' },
    set_search_query_rating: { query_id: ids.search_id, rating: 1 },
    create_organization_api_key: { name: 'intruder', role: 0 },
    update_organization: { name: 'renamed' },
    update_user: { role: 0 },
    split_html_content: { chunk_html: '<h1>Intro</h1><p>Text.</p>' },
    create_api_only_user: { user_email: 'newcomer@example.com', user_name: 'Newcomer' },
    create_topic: { owner_id: 'intruder' },
    update_topic: { topic_id: ids.topic_id, name: 'renamed' },
    clone_topic: { topic_id: ids.topic_id, owner_id: 'intruder' },
    update_crawl_request: { crawl_id: ids.crawl_id, crawl_options: { site_url: 'https://example.com/' } },
    create_experiment: {
      name: 'intruder',
      experiment_config: { area: 'search', control_name: 'control', control_split: 0.5, t1_name: 't1', t1_split: 0.5 },
    },
    update_experiment: { id: ids.experiment_id, name: 'renamed' },
    ab_test: { experiment_id: ids.experiment_id, user_id: 'intruder' },
  };
  return bodies[operationId] ?? {};
}

const ops = Object.entries(operations) as [string, { method: string; path: string; role: number | null; scope: string }][];

beforeAll(async () => {
  service = await startTestService();
  await setUpOrganization(a, 'alpha');
  await setUpOrganization(b, 'beta');
});
afterAll(async () => {
  await service?.stop();
});

describe("a foreign organization's owner key is refused on every route", () => {
  it('covers every operation of the contract', () => {
    for (const [operationId, op] of ops) {
      if (callerOnly.has(operationId)) continue;
      expect(() => fillPath(op.path, a), operationId).not.toThrow();
    }
  });

  it.each(ops.filter(([id]) => !callerOnly.has(id)))("%s with A's scoping headers", async (operationId, op) => {
    const before = await snapshotOf(a.organization_id);
    const reply = await service.request(op.method.toUpperCase(), fillPath(op.path, a), {
      headers: { authorization: b.key, 'SVC-Dataset': a.dataset_id, 'SVC-Organization': a.organization_id },
      body: op.method === 'get' || op.method === 'delete' ? undefined : bodyFor(operationId, a),
    });
    expect([401, 403, 404], `${operationId}: ${reply.status} ${JSON.stringify(reply.body)}`).toContain(reply.status);
    expect(await snapshotOf(a.organization_id)).toEqual(before);
  });

  // Routes whose only path parameters are tracking ids, owner ids (names of the caller's choosing) or
  // pages address records through the scoping header (B's own here), so only routes with ids of A in
  // the path are exercised this way.
  const addressesByPathId = (path: string) =>
    (path.match(/\{([^}]+)\}/g) ?? []).some((p) => !p.includes('tracking_id') && p !== '{owner_id}' && p !== '{page}');

  it.each(ops.filter(([id, op]) => !callerOnly.has(id) && addressesByPathId(op.path)))(
    "%s with B's own headers and A's ids in the path",
    async (operationId, op) => {
      const before = await snapshotOf(a.organization_id);
      const reply = await service.request(op.method.toUpperCase(), fillPath(op.path, a), {
        headers: { authorization: b.key, 'SVC-Dataset': b.dataset_id, 'SVC-Organization': b.organization_id },
        body: op.method === 'get' || op.method === 'delete' ? undefined : bodyFor(operationId, a),
      });
      expect([400, 401, 403, 404], `${operationId}: ${reply.status} ${JSON.stringify(reply.body)}`).toContain(reply.status);
      expect(await snapshotOf(a.organization_id)).toEqual(before);
    },
  );

  // Operations that address a record of A by an id in the body (bodyFor puts A's there).
  const addressedByBody = new Set([
    'update_experiment',
    'ab_test',
    'send_event_data',
    'send_ctr_data',
    'get_search_analytics',
    'set_search_query_rating',
    'get_cluster_analytics',
    'get_recommendation_analytics',
    'get_rag_analytics',
    'set_rag_query_rating',
  ]);
  it.each(ops.filter(([id]) => addressedByBody.has(id)))("%s with B's own headers and A's ids in the body", async (operationId, op) => {
    const before = await snapshotOf(a.organization_id);
    const reply = await service.request(op.method.toUpperCase(), fillPath(op.path, b), {
      headers: { authorization: b.key, 'SVC-Dataset': b.dataset_id, 'SVC-Organization': b.organization_id },
      body: bodyFor(operationId, a),
    });
    expect(reply.status, `${operationId}: ${JSON.stringify(reply.body)}`).toBe(404);
    expect(await snapshotOf(a.organization_id)).toEqual(before);
  });

  it.each(ops.filter(([id]) => callerOnly.has(id)))('%s shows B nothing of A', async (operationId, op) => {
    const before = await snapshotOf(a.organization_id);
    const reply = await service.request(op.method.toUpperCase(), op.path, {
      headers: { authorization: b.key },
      body: op.method === 'post' ? bodyFor(operationId, a) : undefined,
    });
    expect(reply.status).toBeLessThan(500);
    for (const id of [a.organization_id, a.dataset_id, a.api_key_id]) expect(JSON.stringify(reply.body)).not.toContain(id);
    expect(await snapshotOf(a.organization_id)).toEqual(before);
  });
});

// An id of another organization must answer exactly as an id that does not exist, or the answer
// would tell B which ids of A exist (404 vs 403 was such an oracle).
describe("another organization's ids answer as unknown ones", () => {
  const UNKNOWN = '00000000-0000-4000-8000-000000000000';
  const send = (op: { method: string; path: string }, path: string, headers: Record<string, string>) =>
    service.request(op.method.toUpperCase(), path, {
      headers: { authorization: b.key, ...headers },
      body: op.method === 'get' || op.method === 'delete' ? undefined : {},
    });
  /** The reply with the id it names blanked, to compare A's id with an unknown one. */
  const alike = (reply: { status: number; body: any }, id: string) => ({ status: reply.status, message: String(reply.body?.message).replaceAll(id, '<id>') });

  it.each(ops.filter(([id, op]) => !callerOnly.has(id) && op.scope === 'dataset'))('%s: SVC-Dataset of A', async (_id, op) => {
    const path = fillPath(op.path, a);
    const foreign = alike(await send(op, path, { 'SVC-Dataset': a.dataset_id }), a.dataset_id);
    expect(foreign).toEqual({ status: 404, message: 'dataset <id> not found' });
    expect(alike(await send(op, path, { 'SVC-Dataset': UNKNOWN }), UNKNOWN)).toEqual(foreign);
  });

  it.each(ops.filter(([id, op]) => !callerOnly.has(id) && op.scope === 'organization'))('%s: SVC-Organization of A', async (_id, op) => {
    const path = fillPath(op.path, a);
    const foreign = alike(await send(op, path, { 'SVC-Organization': a.organization_id }), a.organization_id);
    expect(foreign).toEqual({ status: 404, message: 'organization <id> not found' });
    expect(alike(await send(op, path, { 'SVC-Organization': UNKNOWN }), UNKNOWN)).toEqual(foreign);
  });

  it.each(ops.filter(([id, op]) => !callerOnly.has(id) && op.path.includes('{organization_id}')))("%s: A's organization id in the path", async (_id, op) => {
    const headers = { 'SVC-Dataset': b.dataset_id, 'SVC-Organization': b.organization_id };
    const foreign = alike(await send(op, fillPath(op.path, a), headers), a.organization_id);
    // 404, or 400 where the handler refuses any path id other than SVC-Organization's.
    expect([400, 404]).toContain(foreign.status);
    expect(alike(await send(op, fillPath(op.path, { ...a, organization_id: UNKNOWN }), headers), UNKNOWN)).toEqual(foreign);
  });

  it('keeps 403 where the caller sees the object but lacks the role', async () => {
    const reader = await service.request('POST', '/api/organization/api_key', {
      headers: { authorization: b.key, 'SVC-Organization': b.organization_id },
      body: { name: 'reader', role: 0 },
    });
    const reply = await service.request('DELETE', `/api/dataset/${b.dataset_id}`, {
      headers: { authorization: reader.body.api_key, 'SVC-Dataset': b.dataset_id },
    });
    expect(reply.status).toBe(403);
    expect(reply.body.message).toMatch(/needs role/);
  });
});
