// The spec's operations that this foundation serves over their real tables.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addChunkToGroup,
  createOrganization,
  createOrganizationApiKey,
  getCrawlRequestsForDataset,
  getFilesCursorHandler,
  getGroupByTrackingId,
  getOrganization,
  getOrganizationApiKeys,
  getRagAnalytics,
} from '../../sdk/src/generated/sdk.gen.js';
import { seedChunk, seedCrawl, seedDataset, seedFile, seedGroup, seedRagQuery } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let otherOrgId: string;
let dataset: { id: string; tracking_id: string | null };
const db = () => service.services.store.db;

async function newKey(organizationId: string, role: 0 | 1 | 2, extra: Record<string, unknown> = {}): Promise<string> {
  const { data, response } = await createOrganizationApiKey({
    client: service.client(),
    headers: { 'SVC-Organization': organizationId },
    body: { name: `role ${role}`, role, ...extra },
  });
  expect(response.status).toBe(200);
  return data!.api_key;
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Acme' } })).data!.id;
  otherOrgId = (await createOrganization({ client: service.client(), body: { name: 'Other' } })).data!.id;
  dataset = await seedDataset(db(), orgId, { tracking_id: 'docs' });
});
afterAll(async () => {
  await service?.stop();
});

describe('GET /api/organization/{organization_id}', () => {
  it('gives the organization with its default plan and subscription', async () => {
    const { data, response } = await getOrganization({ client: service.client(), headers: { 'SVC-Organization': orgId }, path: { organization_id: orgId } });
    expect(response.status).toBe(200);
    expect(data!.organization).toMatchObject({ id: orgId, name: 'Acme' });
    expect(data!.plan).toMatchObject({ name: 'Self-hosted' });
    expect(data!.subscription).toMatchObject({ organization_id: orgId });
  });

  it('needs admin or owner: a read key gets 403', async () => {
    const key = await newKey(orgId, 0);
    const { response, error } = await getOrganization({
      client: service.client(key),
      headers: { 'SVC-Organization': orgId },
      path: { organization_id: orgId },
    });
    expect(response.status).toBe(403);
    expect(error!.message).toMatch(/admin/);
  });

  it("answers another organization's key 404, as for an unknown organization", async () => {
    const key = await newKey(otherOrgId, 2);
    const { response } = await getOrganization({ client: service.client(key), headers: { 'SVC-Organization': orgId }, path: { organization_id: orgId } });
    expect(response.status).toBe(404);
  });

  it('404 for an unknown organization', async () => {
    const unknown = '00000000-0000-4000-8000-00000000abcd';
    const { response } = await getOrganization({ client: service.client(), headers: { 'SVC-Organization': unknown }, path: { organization_id: unknown } });
    expect(response.status).toBe(404);
  });
});

describe('organization API keys', () => {
  it('creates a key that authenticates, and lists keys without their values, paged by cursor', async () => {
    const org = (await createOrganization({ client: service.client(), body: { name: 'Keys' } })).data!.id;
    const keys = [await newKey(org, 2), await newKey(org, 1), await newKey(org, 0)];
    for (const key of keys) expect(key).toMatch(/^svc_[A-Za-z0-9_-]{40,}$/);

    const first = await getOrganizationApiKeys({ client: service.client(keys[0]), headers: { 'SVC-Organization': org }, query: { limit: 2 } });
    expect(first.response.status).toBe(200);
    expect(first.data).toHaveLength(2);
    const rest = await getOrganizationApiKeys({
      client: service.client(keys[0]),
      headers: { 'SVC-Organization': org },
      query: { limit: 2, cursor: first.data![1].id },
    });
    expect(rest.data).toHaveLength(1);
    const all = [...first.data!, ...rest.data!];
    expect(new Set(all.map((k) => k.id)).size).toBe(3);
    expect(all.map((k) => k.role).sort()).toEqual([0, 1, 2]);
    expect(JSON.stringify(all)).not.toContain(keys[0].slice(4));
    const stored = await db()('api_keys').where({ organization_id: org }).pluck('key_hash');
    for (const key of keys) expect(stored).not.toContain(key);
  });

  it('a key may not create a key of a higher role', async () => {
    const reader = await newKey(orgId, 0);
    const { response, error } = await createOrganizationApiKey({
      client: service.client(reader),
      headers: { 'SVC-Organization': orgId },
      body: { name: 'escalate', role: 2 },
    });
    expect(response.status).toBe(403);
    expect(error!.message).toMatch(/role/);
  });

  it('an expired key is refused with 401', async () => {
    const key = await newKey(orgId, 2, { expires_at: new Date(Date.now() + 1500).toISOString() });
    await new Promise((r) => setTimeout(r, 1600));
    const reply = await service.request('GET', '/api/organization/api_key', { headers: { authorization: key, 'SVC-Organization': orgId } });
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/expired/);
  });

  it('bad key requests: unknown role, unknown scope, foreign dataset, past expiry', async () => {
    const call = (body: Record<string, unknown>) =>
      service.request('POST', '/api/organization/api_key', { headers: { authorization: ADMIN_KEY, 'SVC-Organization': orgId }, body });
    expect((await call({ name: 'x', role: 7 })).status).toBe(400);
    const scope = await call({ name: 'x', role: 0, scopes: ['GET /api/nope'] });
    expect(scope.status).toBe(400);
    expect(scope.body.message).toMatch(/GET \/api\/nope/);
    const foreign = await call({ name: 'x', role: 0, dataset_ids: ['00000000-0000-4000-8000-00000000abcd'] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.message).toMatch(/dataset_ids/);
    expect((await call({ name: 'x', role: 0, expires_at: '2001-01-01T00:00:00' })).status).toBe(400);
  });

  it('scopes limit a key to its routes', async () => {
    const key = await newKey(orgId, 0, { scopes: ['GET /api/chunk_group/tracking_id/{tracking_id}'] });
    await seedGroup(db(), dataset.id, { tracking_id: 'scoped' });
    const allowed = await getGroupByTrackingId({ client: service.client(key), headers: { 'SVC-Dataset': dataset.id }, path: { tracking_id: 'scoped' } });
    expect(allowed.response.status).toBe(200);
    const refused = await getFilesCursorHandler({ client: service.client(key), headers: { 'SVC-Dataset': dataset.id } });
    expect(refused.response.status).toBe(403);
    expect(refused.error!.message).toMatch(/scopes/);
  });

  it('dataset_ids limit a key to those datasets', async () => {
    const other = await seedDataset(db(), orgId);
    const key = await newKey(orgId, 1, { dataset_ids: [other.id] });
    expect((await getFilesCursorHandler({ client: service.client(key), headers: { 'SVC-Dataset': other.id } })).response.status).toBe(200);
    expect((await getFilesCursorHandler({ client: service.client(key), headers: { 'SVC-Dataset': dataset.id } })).response.status).toBe(403);
  });
});

describe('GET /api/chunk_group/tracking_id/{tracking_id}', () => {
  it('finds the group by tracking id, with the dataset named by its tracking id too', async () => {
    const groupId = await seedGroup(db(), dataset.id, { tracking_id: 'faq', name: 'FAQ', tag_set: ['help'] });
    const { data, response } = await getGroupByTrackingId({ client: service.client(), headers: { 'SVC-Dataset': 'docs' }, path: { tracking_id: 'faq' } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: groupId, dataset_id: dataset.id, name: 'FAQ', tracking_id: 'faq', tag_set: ['help'], file_id: null });
  });

  it('404 for an unknown tracking id and for an unknown dataset', async () => {
    const missing = await getGroupByTrackingId({ client: service.client(), headers: { 'SVC-Dataset': dataset.id }, path: { tracking_id: 'nope' } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.message).toMatch(/nope/);
    const noDataset = await getGroupByTrackingId({ client: service.client(), headers: { 'SVC-Dataset': 'no-such-dataset' }, path: { tracking_id: 'faq' } });
    expect(noDataset.response.status).toBe(404);
  });

  it('a read key may use it; a foreign key gets 404', async () => {
    await seedGroup(db(), dataset.id, { tracking_id: 'read-me' });
    const reader = await newKey(orgId, 0);
    expect(
      (await getGroupByTrackingId({ client: service.client(reader), headers: { 'SVC-Dataset': dataset.id }, path: { tracking_id: 'read-me' } })).response
        .status,
    ).toBe(200);
    const foreign = await newKey(otherOrgId, 2);
    expect(
      (await getGroupByTrackingId({ client: service.client(foreign), headers: { 'SVC-Dataset': dataset.id }, path: { tracking_id: 'read-me' } })).response
        .status,
    ).toBe(404);
  });
});

describe('POST /api/chunk_group/chunk/{group_id}', () => {
  it('bookmarks a chunk by id or by tracking id, once', async () => {
    const groupId = await seedGroup(db(), dataset.id);
    const chunkA = await seedChunk(db(), dataset.id);
    await seedChunk(db(), dataset.id, { tracking_id: 'chunk-b' });
    const headers = { 'SVC-Dataset': dataset.id };
    expect((await addChunkToGroup({ client: service.client(), headers, path: { group_id: groupId }, body: { chunk_id: chunkA } })).response.status).toBe(204);
    expect(
      (await addChunkToGroup({ client: service.client(), headers, path: { group_id: groupId }, body: { chunk_tracking_id: 'chunk-b' } })).response.status,
    ).toBe(204);
    expect((await addChunkToGroup({ client: service.client(), headers, path: { group_id: groupId }, body: { chunk_id: chunkA } })).response.status).toBe(204);
    expect(await db()('chunk_group_bookmarks').where({ group_id: groupId }).count<{ count: string }[]>('* as count')).toEqual([{ count: '2' }]);
  });

  it('refuses both or neither chunk field, unknown chunks and groups, and the read role', async () => {
    const groupId = await seedGroup(db(), dataset.id);
    const chunkId = await seedChunk(db(), dataset.id, { tracking_id: 'c-1' });
    const call = (body: Record<string, unknown>, key = ADMIN_KEY, group = groupId) =>
      service.request('POST', `/api/chunk_group/chunk/${group}`, { headers: { authorization: key, 'SVC-Dataset': dataset.id }, body });
    const both = await call({ chunk_id: chunkId, chunk_tracking_id: 'c-1' });
    expect(both.status).toBe(400);
    expect(both.body.message).toMatch(/exactly one/);
    expect((await call({})).status).toBe(400);
    expect((await call({ chunk_id: 'not-a-uuid' })).status).toBe(400);
    expect((await call({ chunk_tracking_id: 'missing' })).status).toBe(404);
    expect((await call({ chunk_id: chunkId }, ADMIN_KEY, '00000000-0000-4000-8000-00000000abcd')).status).toBe(404);
    const reader = await newKey(orgId, 0);
    expect((await call({ chunk_id: chunkId }, reader)).status).toBe(403);
    expect(await db()('chunk_group_bookmarks').where({ group_id: groupId }).count<{ count: string }[]>('* as count')).toEqual([{ count: '0' }]);
  });

  it('a chunk of another dataset cannot be added', async () => {
    const groupId = await seedGroup(db(), dataset.id);
    const elsewhere = await seedDataset(db(), orgId);
    const foreignChunk = await seedChunk(db(), elsewhere.id);
    const reply = await service.request('POST', `/api/chunk_group/chunk/${groupId}`, {
      headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset.id },
      body: { chunk_id: foreignChunk },
    });
    expect(reply.status).toBe(404);
  });
});

describe('GET /api/dataset/scroll_files', () => {
  it('pages through files in id order with cursor >=, default page size 10, null cursor at the end', async () => {
    const ds = await seedDataset(db(), orgId);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await seedFile(db(), ds.id, { file_name: `f${i}.txt` }));
    ids.sort();
    const groupId = await seedGroup(db(), ds.id, { file_id: ids[0], name: 'from file' });
    const headers = { 'SVC-Dataset': ds.id };

    const first = await getFilesCursorHandler({ client: service.client(), headers });
    expect(first.response.status).toBe(200);
    expect(first.data!.file_with_chunk_groups.map((f) => f.id)).toEqual(ids.slice(0, 10));
    expect(first.data!.next_cursor).toBe(ids[10]);
    expect(first.data!.file_with_chunk_groups[0].chunk_groups!.map((g) => g.id)).toEqual([groupId]);
    expect(first.data!.file_with_chunk_groups[0]).toMatchObject({ size: 1234, tag_set: 'a,b', metadata: { kind: 'report' } });

    const second = await getFilesCursorHandler({ client: service.client(), headers, query: { cursor: first.data!.next_cursor } });
    expect(second.data!.file_with_chunk_groups.map((f) => f.id)).toEqual(ids.slice(10));
    expect(second.data!.next_cursor).toBeNull();

    const fromExact = await getFilesCursorHandler({ client: service.client(), headers, query: { cursor: ids[5], page_size: 2 } });
    expect(fromExact.data!.file_with_chunk_groups.map((f) => f.id)).toEqual(ids.slice(5, 7));

    const empty = await getFilesCursorHandler({ client: service.client(), headers, query: { page_size: 0 } });
    expect(empty.data!.file_with_chunk_groups).toEqual([]);
  });

  it('refuses a negative page size and a malformed cursor', async () => {
    const headers = { authorization: ADMIN_KEY, 'SVC-Dataset': dataset.id };
    const negative = await service.request('GET', '/api/dataset/scroll_files?page_size=-1', { headers });
    expect(negative.status).toBe(400);
    expect(negative.body.message).toMatch(/page_size/);
    expect((await service.request('GET', '/api/dataset/scroll_files?cursor=abc', { headers })).status).toBe(400);
  });

  it('needs the SVC-Dataset header', async () => {
    const reply = await service.request('GET', '/api/dataset/scroll_files', { headers: { authorization: ADMIN_KEY } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/svc-dataset/i);
  });
});

describe('GET /api/crawl', () => {
  it('lists crawl requests newest first, paged, in the crawl record shape', async () => {
    const ds = await seedDataset(db(), orgId);
    for (let i = 0; i < 3; i++) await seedCrawl(db(), ds.id, { url: `https://site${i}.example`, created_at: new Date(Date.UTC(2026, 0, i + 1)) });
    const headers = { 'SVC-Dataset': ds.id };
    const { data, response } = await getCrawlRequestsForDataset({ client: service.client(), headers, query: { page: 1, limit: 2 } });
    expect(response.status).toBe(200);
    expect(data!.map((c) => c.url)).toEqual(['https://site2.example', 'https://site1.example']);
    expect(data![0]).toMatchObject({ status: 'Pending', crawl_type: 'firecrawl', created_at: '2026-01-03T00:00:00Z', next_crawl_at: '2026-12-01T00:00:00Z' });
    expect(data![0].crawl_options.crawl_options).toMatchObject({ site_url: 'https://example.com', limit: 100 });
    const page2 = await getCrawlRequestsForDataset({ client: service.client(), headers, query: { page: 2, limit: 2 } });
    expect(page2.data!.map((c) => c.url)).toEqual(['https://site0.example']);
  });

  it('needs the admin role', async () => {
    const reader = await newKey(orgId, 0);
    expect((await getCrawlRequestsForDataset({ client: service.client(reader), headers: { 'SVC-Dataset': dataset.id } })).response.status).toBe(403);
  });
});

describe('POST /api/analytics/rag (rag_queries)', () => {
  it('filters, sorts and pages the RAG queries', async () => {
    const ds = await seedDataset(db(), orgId);
    for (let i = 0; i < 12; i++) {
      await seedRagQuery(db(), ds.id, {
        user_message: i % 2 ? `how do refunds work ${i}` : `shipping times ${i}`,
        top_score: i / 10,
        query_rating: i % 5,
        created_at: new Date(Date.UTC(2026, 5, i + 1)),
        component_name: i < 6 ? 'search-bar' : 'chat',
      });
    }
    const headers = { 'SVC-Dataset': ds.id };
    const client = service.client();
    const page1 = await getRagAnalytics({ client, headers, body: { type: 'rag_queries' } });
    expect(page1.response.status).toBe(200);
    const queries = (page1.data as { queries: { user_message: string; created_at: string }[] }).queries;
    expect(queries).toHaveLength(10);
    expect(queries[0].created_at).toBe('2026-06-12 00:00:00.000');
    const page2 = await getRagAnalytics({ client, headers, body: { type: 'rag_queries', page: 2 } });
    expect((page2.data as { queries: unknown[] }).queries).toHaveLength(2);

    const filtered = await getRagAnalytics({
      client,
      headers,
      body: {
        type: 'rag_queries',
        filter: { query: 'REFUNDS', component_name: 'search-bar', date_range: { gte: '2026-06-02', lt: '2026-06-06 00:00:00.000' } },
        sort_by: 'top_score',
        sort_order: 'asc',
      },
    });
    const messages = (filtered.data as { queries: { user_message: string }[] }).queries.map((q) => q.user_message);
    expect(messages).toEqual(['how do refunds work 1', 'how do refunds work 3']);

    const rated = await getRagAnalytics({ client, headers, body: { type: 'rag_queries', filter: { query_rating: { gte: 4 } } } });
    expect((rated.data as { queries: { query_rating: { rating: number } }[] }).queries.map((q) => q.query_rating.rating)).toEqual([4, 4]);
  });

  it('refuses a negative page, an unknown type and an unknown sort field', async () => {
    const call = (body: unknown) => service.request('POST', '/api/analytics/rag', { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset.id }, body });
    const negative = await call({ type: 'rag_queries', page: -1 });
    expect(negative.status).toBe(400);
    expect(negative.body.message).toMatch(/page/);
    expect((await call({ type: 'no_such_report' })).status).toBe(400);
    expect((await call({ type: 'rag_queries', sort_by: 'nope' })).status).toBe(400);
    expect((await call({ type: 'rag_queries', filter: { date_range: { gt: 'yesterday-ish' } } })).status).toBe(400);
    const reversed = await call({ type: 'rag_queries', filter: { date_range: { gte: '2026-02-01', lt: '2026-01-01' } } });
    expect([reversed.status, reversed.body.message]).toEqual([400, expect.stringMatching(/filter\.date_range: the range starts .* after it ends/)]);
  });
});
