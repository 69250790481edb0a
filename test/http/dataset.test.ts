// The Dataset operations over HTTP: creating, changing, listing, counting, events, tags, deleting,
// clearing and cloning, with their bad input, roles and plan limits.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  batchCreateDatasets,
  clearDataset,
  cloneDataset,
  createDataset,
  createOrganization,
  createOrganizationApiKey,
  deleteDataset,
  deleteDatasetByTrackingId,
  getAllTags,
  getDataset,
  getDatasetByTrackingId,
  getDatasetQueueLengths,
  getDatasetsFromOrganization,
  getEvents,
  getUsageByDatasetId,
  updateDataset,
} from '../../sdk/src/generated/sdk.gen.js';
import { defaultConfiguration } from '../../server/domain/datasetConfig.js';
import { emitEvent } from '../../server/domain/events.js';
import { seedFile, seedGroup } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';
import { termColumns } from '../../server/domain/chunks/write.js';
import { lexicalIds } from '../support/lexical.js';

let service: TestService;
let orgId: string;
let otherOrgId: string;
const keys: Record<'read' | 'admin' | 'owner', string> = { read: '', admin: '', owner: '' };
const db = () => service.services.store.db;
const client = (key = ADMIN_KEY) => service.client(key);
const org = (id = orgId) => ({ 'SVC-Organization': id });
const ds = (id: string) => ({ 'SVC-Dataset': id });
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';

async function newKey(organizationId: string, role: 0 | 1 | 2, extra: Record<string, unknown> = {}): Promise<string> {
  const { data, response } = await createOrganizationApiKey({ client: client(), headers: org(organizationId), body: { name: `role ${role}`, role, ...extra } });
  expect(response.status).toBe(200);
  return data!.api_key;
}

async function newOrg(name = 'Org'): Promise<string> {
  const { data } = await createOrganization({ client: client(), body: { name } });
  return data!.id;
}

async function newDataset(organizationId = orgId, body: Record<string, unknown> = {}) {
  const { data, response, error } = await createDataset({ client: client(), headers: org(organizationId), body: { dataset_name: 'docs', ...body } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!;
}

/** Chunks with text and tags, inserted directly and indexed (chunk writes arrive with the chunk feature). */
async function seedChunks(datasetId: string, chunks: { html?: string; tags?: string[]; tracking_id?: string }[]): Promise<string[]> {
  const rows = chunks.map((c, i) => ({
    id: randomUUID(),
    dataset_id: datasetId,
    chunk_html: c.html ?? `<p>chunk ${i}</p>`,
    tag_set: c.tags ?? null,
    tracking_id: c.tracking_id ?? null,
    metadata: JSON.stringify({ n: i }),
    weight: i,
  }));
  // With the terms the write path derives: on PostgreSQL they are the full-text index.
  if (rows.length) await db()('chunks').insert(rows.map((r) => ({ ...r, ...termColumns(db(), r.chunk_html.replace(/<[^>]*>/g, ' ')) })));
  await service.services.lexical.upsert(rows.map((r) => ({ id: r.id, datasetId, text: r.chunk_html.replace(/<[^>]*>/g, ' ') })));
  return rows.map((r) => r.id);
}

async function count(table: string, where: Record<string, unknown>): Promise<number> {
  const [row] = await db()(table).where(where).count<{ n: string }[]>('* as n');
  return Number(row.n);
}

async function waitFor(probe: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Puts the organization on a plan of its own with the given limits. */
async function setPlan(organizationId: string, limits: { dataset_count?: number; chunk_count?: number }): Promise<void> {
  const [plan] = await db()('plans')
    .insert({
      name: `tiny-${randomUUID()}`,
      chunk_count: limits.chunk_count ?? 1_000_000,
      dataset_count: limits.dataset_count ?? 1000,
      file_storage: 1024 ** 3,
      message_count: 1000,
      user_count: 10,
    })
    .returning('id');
  await db()('subscriptions').where({ organization_id: organizationId }).update({ plan_id: plan.id });
}

beforeAll(async () => {
  service = await startTestService();
  orgId = await newOrg('Acme');
  otherOrgId = await newOrg('Other');
  keys.read = await newKey(orgId, 0);
  keys.admin = await newKey(orgId, 1);
  keys.owner = await newKey(orgId, 2);
});
afterAll(async () => {
  await service?.stop();
});

describe('POST /api/dataset (create_dataset)', () => {
  it('creates a dataset with the complete default configuration, stored resolved', async () => {
    const { data, response } = await createDataset({ client: client(keys.owner), headers: org(), body: { dataset_name: 'Help centre', tracking_id: 'help' } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ name: 'Help centre', tracking_id: 'help', organization_id: orgId, deleted: 0 });
    expect(data!.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
    expect(data!.server_configuration).toEqual(defaultConfiguration);
    expect(data!.server_configuration).toMatchObject({
      EMBEDDING_BASE_URL: null,
      EMBEDDING_MODEL_NAME: 'builtin',
      EMBEDDING_SIZE: 384,
      DISTANCE_METRIC: 'cosine',
      BM25_K: 1.2,
      BM25_B: 0.75,
      MAX_LIMIT: 10000,
      PUBLIC_DATASET: { enabled: false },
    });
    const stored = await db()('datasets').where({ id: data!.id }).first();
    expect(stored.server_configuration).toEqual(defaultConfiguration);
  });

  it('refuses an embedding endpoint without the name of its model', async () => {
    const reply = await service.request('POST', '/api/dataset', {
      headers: { authorization: ADMIN_KEY, 'SVC-Organization': orgId },
      body: { dataset_name: 'remote', server_configuration: { EMBEDDING_BASE_URL: 'https://embeddings.example.com/v1' } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/EMBEDDING_MODEL_NAME/);
  });

  it('takes the configuration fields given and defaults the rest', async () => {
    const data = await newDataset(orgId, {
      server_configuration: {
        DISTANCE_METRIC: 'dot',
        EMBEDDING_BASE_URL: 'https://embeddings.example.com/v1',
        EMBEDDING_MODEL_NAME: 'text-embedding-3-small',
        EMBEDDING_SIZE: 768,
        BM25_K: 0,
        BM25_B: 1,
        STOP_TOKENS: ['###'],
        PUBLIC_DATASET: { enabled: true, extra_params: { brandName: 'Acme' } },
        TOOL_CONFIGURATION: { query_tool_options: { tool_description: 'search the docs' } },
        TEMPERATURE: null,
      },
    });
    expect(data.server_configuration).toEqual({
      ...defaultConfiguration,
      DISTANCE_METRIC: 'dot',
      EMBEDDING_BASE_URL: 'https://embeddings.example.com/v1',
      EMBEDDING_MODEL_NAME: 'text-embedding-3-small',
      EMBEDDING_SIZE: 768,
      BM25_K: 0,
      BM25_B: 1,
      STOP_TOKENS: ['###'],
      PUBLIC_DATASET: { enabled: true, extra_params: { brandName: 'Acme' } },
      TOOL_CONFIGURATION: { query_tool_options: { tool_description: 'search the docs' } },
    });
  });

  it('refuses missing and mistyped fields and invalid configuration values, naming them, writing nothing', async () => {
    const before = await count('datasets', { organization_id: orgId });
    const call = (body: unknown) => service.request('POST', '/api/dataset', { headers: { authorization: ADMIN_KEY, ...org() }, body });
    const cases: [unknown, RegExp][] = [
      [{}, /dataset_name/],
      [{ dataset_name: 42 }, /dataset_name/],
      [{ dataset_name: '' }, /dataset_name/],
      [{ dataset_name: 'x', tracking_id: 7 }, /tracking_id/],
      [{ dataset_name: 'x', server_configuration: { DISTANCE_METRIC: 'hamming' } }, /DISTANCE_METRIC/],
      [{ dataset_name: 'x', server_configuration: { BM25_B: 1.5 } }, /BM25_B/],
      [{ dataset_name: 'x', server_configuration: { BM25_K: -0.1 } }, /BM25_K/],
      [{ dataset_name: 'x', server_configuration: { EMBEDDING_SIZE: 0 } }, /EMBEDDING_SIZE/],
      [{ dataset_name: 'x', server_configuration: { EMBEDDING_SIZE: 3.5 } }, /EMBEDDING_SIZE/],
      [{ dataset_name: 'x', server_configuration: { EMBEDDING_BASE_URL: 'ftp://files.example.com' } }, /EMBEDDING_BASE_URL/],
      [{ dataset_name: 'x', server_configuration: { LLM_BASE_URL: 'not a url' } }, /LLM_BASE_URL/],
      [{ dataset_name: 'x', server_configuration: { TEMPERATURE: 3 } }, /TEMPERATURE/],
      [{ dataset_name: 'x', server_configuration: { FULLTEXT_ENABLED: 'yes' } }, /FULLTEXT_ENABLED/],
      [{ dataset_name: 'x', server_configuration: { MAX_LIMIT: 0 } }, /MAX_LIMIT/],
      [{ dataset_name: 'x', server_configuration: { PUBLIC_DATASET: { extra_params: {} } } }, /enabled/],
      [{ dataset_name: 'x', server_configuration: { NO_SUCH_FIELD: true } }, /NO_SUCH_FIELD/],
      [{ dataset_name: 'x', server_configuration: 'fast' }, /server_configuration/],
    ];
    for (const [body, message] of cases) {
      const reply = await call(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message, JSON.stringify(body)).toMatch(message);
    }
    expect(await count('datasets', { organization_id: orgId })).toBe(before);
  });

  it('refuses a tracking id already used in the organization, and allows it in another one', async () => {
    await newDataset(orgId, { tracking_id: 'unique-one' });
    const again = await createDataset({ client: client(), headers: org(), body: { dataset_name: 'again', tracking_id: 'unique-one' } });
    expect(again.response.status).toBe(400);
    expect(again.error!.message).toMatch(/tracking_id unique-one/);
    const elsewhere = await createDataset({ client: client(), headers: org(otherOrgId), body: { dataset_name: 'x', tracking_id: 'unique-one' } });
    expect(elsewhere.response.status).toBe(200);
  });

  it('needs the owner role', async () => {
    for (const key of [keys.read, keys.admin]) {
      const { response, error } = await createDataset({ client: client(key), headers: org(), body: { dataset_name: 'nope' } });
      expect(response.status).toBe(403);
      expect(error!.message).toMatch(/owner/);
    }
    const foreign = await newKey(otherOrgId, 2);
    expect((await createDataset({ client: client(foreign), headers: org(), body: { dataset_name: 'nope' } })).response.status).toBe(404);
  });

  it('stops at the plan limit with 426 and writes nothing', async () => {
    const limited = await newOrg('Limited');
    await setPlan(limited, { dataset_count: 2 });
    await newDataset(limited);
    await newDataset(limited);
    const { response, error } = await createDataset({ client: client(), headers: org(limited), body: { dataset_name: 'third' } });
    expect(response.status).toBe(426);
    expect(error!.message).toMatch(/allows 2 datasets/);
    expect(await count('datasets', { organization_id: limited })).toBe(2);
  });
});

describe('PUT /api/dataset (update_dataset)', () => {
  it('renames, retracks and merges configuration fields over the stored ones', async () => {
    const created = await newDataset(orgId, { tracking_id: 'to-update', server_configuration: { DISTANCE_METRIC: 'euclidean', BM25_K: 2 } });
    const { data, response } = await updateDataset({
      client: client(keys.owner),
      headers: org(),
      body: { dataset_id: created.id, dataset_name: 'renamed', new_tracking_id: 'updated', server_configuration: { BM25_B: 0.5, LOCKED: false } },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: created.id, name: 'renamed', tracking_id: 'updated' });
    expect(data!.server_configuration).toEqual({ ...defaultConfiguration, DISTANCE_METRIC: 'euclidean', BM25_K: 2, BM25_B: 0.5 });

    // By tracking id; a null field returns to its default.
    const byTracking = await updateDataset({ client: client(), headers: org(), body: { tracking_id: 'updated', server_configuration: { BM25_K: null } } });
    expect(byTracking.response.status).toBe(200);
    expect(byTracking.data!.server_configuration).toMatchObject({ BM25_K: 1.2, BM25_B: 0.5, DISTANCE_METRIC: 'euclidean' });
    expect(byTracking.data!.name).toBe('renamed');
    const stored = await db()('datasets').where({ id: created.id }).first();
    expect(stored.server_configuration).toEqual(byTracking.data!.server_configuration);
  });

  it('refuses to change the embedding size or distance metric once the dataset holds chunks', async () => {
    const created = await newDataset();
    // No chunks yet: allowed.
    const early = await updateDataset({ client: client(), headers: org(), body: { dataset_id: created.id, server_configuration: { EMBEDDING_SIZE: 1024 } } });
    expect(early.response.status).toBe(200);
    await seedChunks(created.id, [{}]);
    for (const change of [{ EMBEDDING_SIZE: 512 }, { DISTANCE_METRIC: 'dot' as const }]) {
      const { response, error } = await updateDataset({ client: client(), headers: org(), body: { dataset_id: created.id, server_configuration: change } });
      expect(response.status).toBe(400);
      expect(error!.message).toMatch(new RegExp(`${Object.keys(change)[0]}.*vectors already exist`));
    }
    // The same value is no change.
    const same = await updateDataset({
      client: client(),
      headers: org(),
      body: { dataset_id: created.id, server_configuration: { EMBEDDING_SIZE: 1024, BM25_K: 3 } },
    });
    expect(same.response.status).toBe(200);
    expect(same.data!.server_configuration).toMatchObject({ EMBEDDING_SIZE: 1024, BM25_K: 3 });
  });

  it('refuses bad requests: no dataset named, unknown or foreign dataset, clashing names, taken tracking id, bad values', async () => {
    const a = await newDataset(orgId, { tracking_id: 'upd-a' });
    await newDataset(orgId, { tracking_id: 'upd-b' });
    const foreign = await newDataset(otherOrgId);
    const call = (body: unknown, key = ADMIN_KEY) => service.request('PUT', '/api/dataset', { headers: { authorization: key, ...org() }, body });
    const neither = await call({ dataset_name: 'x' });
    expect(neither.status).toBe(400);
    expect(neither.body.message).toMatch(/dataset_id or tracking_id/);
    expect((await call({ dataset_id: UNKNOWN, dataset_name: 'x' })).status).toBe(404);
    expect((await call({ tracking_id: 'no-such', dataset_name: 'x' })).status).toBe(404);
    expect((await call({ dataset_id: foreign.id, dataset_name: 'x' })).status).toBe(404);
    const clash = await call({ dataset_id: a.id, tracking_id: 'upd-b' });
    expect(clash.status).toBe(400);
    expect(clash.body.message).toMatch(/name different datasets/);
    const taken = await call({ dataset_id: a.id, new_tracking_id: 'upd-b' });
    expect(taken.status).toBe(400);
    expect(taken.body.message).toMatch(/new_tracking_id upd-b/);
    const bad = await call({ dataset_id: a.id, server_configuration: { N_RETRIEVALS_TO_INCLUDE: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/N_RETRIEVALS_TO_INCLUDE/);
    expect((await call({ dataset_id: 'not-a-uuid' })).status).toBe(400);
    expect((await call({ dataset_id: a.id, dataset_name: 'x' }, keys.admin)).status).toBe(403);
    const unchanged = await db()('datasets').where({ id: a.id }).first();
    expect(unchanged).toMatchObject({ name: 'docs', tracking_id: 'upd-a' });
  });

  it('a key limited to other datasets may not update this one', async () => {
    const mine = await newDataset();
    const other = await newDataset();
    const limited = await newKey(orgId, 2, { dataset_ids: [other.id] });
    const { response } = await updateDataset({ client: client(limited), headers: org(), body: { dataset_id: mine.id, dataset_name: 'x' } });
    expect(response.status).toBe(403);
  });
});

describe('POST /api/dataset/batch_create_datasets', () => {
  it('creates every dataset in order', async () => {
    const { data, response } = await batchCreateDatasets({
      client: client(keys.owner),
      headers: org(),
      body: {
        datasets: [
          { dataset_name: 'one', tracking_id: 'batch-1' },
          { dataset_name: 'two', server_configuration: { BM25_ENABLED: false } },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(data!.map((d) => d.name)).toEqual(['one', 'two']);
    expect(data![1].server_configuration).toEqual({ ...defaultConfiguration, BM25_ENABLED: false });
  });

  it('is all or nothing: a duplicate or taken tracking id refuses the whole batch', async () => {
    await newDataset(orgId, { tracking_id: 'batch-taken' });
    const before = await count('datasets', { organization_id: orgId });
    const call = (body: unknown) => service.request('POST', '/api/dataset/batch_create_datasets', { headers: { authorization: ADMIN_KEY, ...org() }, body });
    const taken = await call({
      datasets: [
        { dataset_name: 'new', tracking_id: 'batch-new' },
        { dataset_name: 'dup', tracking_id: 'batch-taken' },
      ],
    });
    expect(taken.status).toBe(400);
    expect(taken.body.message).toMatch(/datasets\[1\]\.tracking_id batch-taken/);
    const twice = await call({
      datasets: [
        { dataset_name: 'a', tracking_id: 'twice' },
        { dataset_name: 'b', tracking_id: 'twice' },
      ],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.message).toMatch(/twice/);
    const badConfig = await call({ datasets: [{ dataset_name: 'a' }, { dataset_name: 'b', server_configuration: { BM25_B: 2 } }] });
    expect(badConfig.status).toBe(400);
    expect(badConfig.body.message).toMatch(/BM25_B/);
    expect((await call({ datasets: [] })).status).toBe(400);
    expect((await call({})).status).toBe(400);
    expect((await call({ datasets: [{ dataset_name: 5 }] })).status).toBe(400);
    expect(await count('datasets', { organization_id: orgId })).toBe(before);
  });

  it('with upsert, updates the datasets whose tracking ids exist and creates the others', async () => {
    const existing = await newDataset(orgId, { tracking_id: 'upsert-me', server_configuration: { BM25_K: 2 } });
    const { data, response } = await batchCreateDatasets({
      client: client(),
      headers: org(),
      body: {
        upsert: true,
        datasets: [
          { dataset_name: 'upserted', tracking_id: 'upsert-me', server_configuration: { BM25_B: 0.1 } },
          { dataset_name: 'fresh', tracking_id: 'upsert-fresh' },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(data![0]).toMatchObject({ id: existing.id, name: 'upserted', tracking_id: 'upsert-me' });
    expect(data![0].server_configuration).toMatchObject({ BM25_K: 2, BM25_B: 0.1 });
    expect(data![1]).toMatchObject({ name: 'fresh', tracking_id: 'upsert-fresh' });
    expect(await count('datasets', { organization_id: orgId, tracking_id: 'upsert-me' })).toBe(1);
  });

  it('counts only the datasets it creates against the plan, and writes nothing past the limit', async () => {
    const limited = await newOrg('Batch limited');
    await setPlan(limited, { dataset_count: 2 });
    await newDataset(limited, { tracking_id: 'kept' });
    const over = await batchCreateDatasets({ client: client(), headers: org(limited), body: { datasets: [{ dataset_name: 'a' }, { dataset_name: 'b' }] } });
    expect(over.response.status).toBe(426);
    expect(await count('datasets', { organization_id: limited })).toBe(1);
    const fits = await batchCreateDatasets({
      client: client(),
      headers: org(limited),
      body: { upsert: true, datasets: [{ dataset_name: 'kept, renamed', tracking_id: 'kept' }, { dataset_name: 'b' }] },
    });
    expect(fits.response.status).toBe(200);
    expect(await count('datasets', { organization_id: limited })).toBe(2);
  });

  it('needs the owner role', async () => {
    const { response } = await batchCreateDatasets({ client: client(keys.admin), headers: org(), body: { datasets: [{ dataset_name: 'x' }] } });
    expect(response.status).toBe(403);
  });
});

describe('GET /api/dataset/{dataset_id} and GET /api/dataset/tracking_id/{tracking_id}', () => {
  it('gives the dataset by id (SVC-Dataset by id or tracking id) and by tracking id', async () => {
    const created = await newDataset(orgId, { tracking_id: 'fetch-me' });
    for (const header of [created.id, 'fetch-me']) {
      const { data, response } = await getDataset({ client: client(keys.admin), headers: ds(header), path: { dataset_id: created.id } });
      expect(response.status).toBe(200);
      expect(data).toEqual(created);
    }
    const byTracking = await getDatasetByTrackingId({ client: client(keys.admin), headers: org(), path: { tracking_id: 'fetch-me' } });
    expect(byTracking.response.status).toBe(200);
    expect(byTracking.data).toEqual(created);
  });

  it('refuses a path id that is not the SVC-Dataset dataset, unknown datasets, bad ids and the read role', async () => {
    const a = await newDataset();
    const b = await newDataset();
    const mismatch = await getDataset({ client: client(), headers: ds(a.id), path: { dataset_id: b.id } });
    expect(mismatch.response.status).toBe(400);
    expect(mismatch.error!.message).toContain(b.id);
    expect(mismatch.error!.message).toContain(a.id);
    expect((await getDataset({ client: client(), headers: ds(UNKNOWN), path: { dataset_id: UNKNOWN } })).response.status).toBe(404);
    expect((await service.request('GET', '/api/dataset/not-a-uuid', { headers: { authorization: ADMIN_KEY, ...ds(a.id) } })).status).toBe(400);
    expect((await getDataset({ client: client(keys.read), headers: ds(a.id), path: { dataset_id: a.id } })).response.status).toBe(403);

    expect((await getDatasetByTrackingId({ client: client(), headers: org(), path: { tracking_id: 'never-given' } })).response.status).toBe(404);
    const foreign = await newDataset(otherOrgId, { tracking_id: 'foreign-only' });
    expect(foreign.id).toBeTruthy();
    expect((await getDatasetByTrackingId({ client: client(), headers: org(), path: { tracking_id: 'foreign-only' } })).response.status).toBe(404);
    expect((await getDatasetByTrackingId({ client: client(keys.read), headers: org(), path: { tracking_id: 'never-given' } })).response.status).toBe(403);
  });
});

describe('GET /api/dataset/organization/{organization_id}', () => {
  it('lists the datasets in creation order with their chunk counts, paged by limit and offset', async () => {
    const listed = await newOrg('Listed');
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await newDataset(listed, { dataset_name: `d${i}` }));
    await seedChunks(made[1].id, [{}, {}, {}]);
    const first = await getDatasetsFromOrganization({ client: client(), headers: org(listed), path: { organization_id: listed } });
    expect(first.response.status).toBe(200);
    expect(first.data!.map((d) => d.dataset.name)).toEqual(['d0', 'd1', 'd2']);
    expect(first.data![1]).toEqual({
      dataset: { id: made[1].id, name: 'd1', organization_id: listed, tracking_id: null, created_at: made[1].created_at, updated_at: made[1].updated_at },
      dataset_usage: { id: made[1].id, dataset_id: made[1].id, chunk_count: 3 },
    });
    const page = await getDatasetsFromOrganization({
      client: client(),
      headers: org(listed),
      path: { organization_id: listed },
      query: { limit: 1, offset: 2 },
    });
    expect(page.data!.map((d) => d.dataset.name)).toEqual(['d2']);
  });

  it('refuses another organization in the path, bad paging and the read role', async () => {
    const mismatch = await getDatasetsFromOrganization({ client: client(), headers: org(), path: { organization_id: otherOrgId } });
    expect(mismatch.response.status).toBe(400);
    expect(mismatch.error!.message).toContain(otherOrgId);
    const headers = { authorization: ADMIN_KEY, ...org() };
    expect((await service.request('GET', `/api/dataset/organization/${orgId}?limit=0`, { headers })).status).toBe(400);
    expect((await service.request('GET', `/api/dataset/organization/${orgId}?offset=-1`, { headers })).status).toBe(400);
    expect((await service.request('GET', `/api/dataset/organization/${orgId}?limit=ten`, { headers })).status).toBe(400);
    expect((await getDatasetsFromOrganization({ client: client(keys.read), headers: org(), path: { organization_id: orgId } })).response.status).toBe(403);
  });
});

describe('GET /api/dataset/usage/{dataset_id} and GET /api/dataset/get_dataset_queue_lengths', () => {
  it('counts the chunks of the dataset', async () => {
    const created = await newDataset();
    await seedChunks(created.id, [{}, {}]);
    const { data, response } = await getUsageByDatasetId({ client: client(keys.admin), headers: ds(created.id), path: { dataset_id: created.id } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ id: created.id, dataset_id: created.id, chunk_count: 2 });
    const other = await newDataset();
    expect((await getUsageByDatasetId({ client: client(), headers: ds(created.id), path: { dataset_id: other.id } })).response.status).toBe(400);
    expect((await getUsageByDatasetId({ client: client(keys.read), headers: ds(created.id), path: { dataset_id: created.id } })).response.status).toBe(403);
  });

  it('counts files waiting or being processed; chunks never wait', async () => {
    const created = await newDataset();
    for (const status of ['pending', 'pending', 'processing', 'completed', 'failed']) {
      const id = await seedFile(db(), created.id);
      await db()('files').where({ id }).update({ status });
    }
    const { data, response } = await getDatasetQueueLengths({ client: client(keys.read), headers: ds(created.id) });
    expect(response.status).toBe(200);
    expect(data).toEqual({ file_queue_length: 3, chunk_queue_length: 0 });
    expect((await getDatasetQueueLengths({ client: client(), headers: ds(UNKNOWN) })).response.status).toBe(404);
  });
});

describe('POST /api/dataset/events', () => {
  it('pages the events newest first, filters by type and names every type the dataset has', async () => {
    const created = await newDataset();
    for (let i = 0; i < 12; i++) {
      await emitEvent(db(), { datasetId: created.id, organizationId: orgId, type: i % 3 === 0 ? 'file_uploaded' : 'chunks_uploaded', data: { n: i } });
      await db()('events')
        .where({ dataset_id: created.id })
        .whereRaw(`event_data->>'n' = ?`, [String(i)])
        .update({ created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) });
    }
    const first = await getEvents({ client: client(keys.read), headers: ds(created.id), body: {} });
    expect(first.response.status).toBe(200);
    expect(first.data!.events).toHaveLength(10);
    expect(first.data!.page_count).toBe(2);
    expect(first.data!.event_types).toEqual(['chunks_uploaded', 'file_uploaded']);
    expect(first.data!.events[0]).toMatchObject({
      dataset_id: created.id,
      organization_id: orgId,
      event_type: 'chunks_uploaded',
      created_at: '2026-01-01 00:00:11.000',
    });
    expect(JSON.parse(first.data!.events[0].event_data)).toEqual({ n: 11 });

    const second = await getEvents({ client: client(), headers: ds(created.id), body: { page: 2 } });
    expect(second.data!.events.map((e) => JSON.parse(e.event_data).n)).toEqual([1, 0]);

    const filtered = await getEvents({ client: client(), headers: ds(created.id), body: { event_types: ['file_uploaded'], page_size: 3 } });
    expect(filtered.data!.events.map((e) => JSON.parse(e.event_data).n)).toEqual([9, 6, 3]);
    expect(filtered.data!.page_count).toBe(2);
    expect(filtered.data!.event_types).toEqual(['chunks_uploaded', 'file_uploaded']);

    const none = await getEvents({ client: client(), headers: ds(created.id), body: { event_types: ['crawl_failed'] } });
    expect(none.data).toEqual({ events: [], event_types: ['chunks_uploaded', 'file_uploaded'], page_count: 0 });
  });

  it('refuses unknown types and out-of-range paging', async () => {
    const created = await newDataset();
    const call = (body: unknown) => service.request('POST', '/api/dataset/events', { headers: { authorization: ADMIN_KEY, ...ds(created.id) }, body });
    const badType = await call({ event_types: ['birthday'] });
    expect(badType.status).toBe(400);
    expect(badType.body.message).toMatch(/event_types/);
    expect((await call({ page: 0 })).status).toBe(400);
    expect((await call({ page_size: 101 })).status).toBe(400);
    expect((await call({ page: 'one' })).status).toBe(400);
  });
});

describe('POST /api/dataset/get_all_tags', () => {
  it('lists the distinct tags with their counts, most frequent first, paged, with the total', async () => {
    const created = await newDataset();
    await seedChunks(created.id, [{ tags: ['red', 'blue'] }, { tags: ['red'] }, { tags: ['red', 'green'] }, { tags: ['blue'] }, {}]);
    const { data, response } = await getAllTags({ client: client(keys.read), headers: ds(created.id), body: {} });
    expect(response.status).toBe(200);
    expect(data).toEqual({
      tags: [
        { tag: 'red', count: 3 },
        { tag: 'blue', count: 2 },
        { tag: 'green', count: 1 },
      ],
      total: 3,
    });
    const page = await getAllTags({ client: client(), headers: ds(created.id), body: { page: 2, page_size: 2 } });
    expect(page.data).toEqual({ tags: [{ tag: 'green', count: 1 }], total: 3 });
    const bad = await service.request('POST', '/api/dataset/get_all_tags', {
      headers: { authorization: ADMIN_KEY, ...ds(created.id) },
      body: { page_size: 0 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/page_size/);
  });
});

describe('DELETE /api/dataset/{dataset_id} and /api/dataset/tracking_id/{tracking_id}', () => {
  it('hides the dataset at once, frees its tracking id, and purges it in the background', async () => {
    const created = await newDataset(orgId, { tracking_id: 'doomed' });
    const chunkIds = await seedChunks(created.id, [{ html: '<p>pelican migration</p>' }, { html: '<p>pelican diet</p>' }]);
    const groupId = await seedGroup(db(), created.id);
    await db()('chunk_group_bookmarks').insert({ group_id: groupId, chunk_id: chunkIds[0] });
    await seedFile(db(), created.id);

    const { response } = await deleteDataset({ client: client(keys.owner), headers: ds(created.id), path: { dataset_id: created.id } });
    expect(response.status).toBe(204);

    // Invisible everywhere at once.
    expect((await getDataset({ client: client(), headers: ds(created.id), path: { dataset_id: created.id } })).response.status).toBe(404);
    expect((await getDatasetByTrackingId({ client: client(), headers: org(), path: { tracking_id: 'doomed' } })).response.status).toBe(404);
    expect((await getEvents({ client: client(), headers: ds('doomed'), body: {} })).response.status).toBe(404);
    const listed = await getDatasetsFromOrganization({ client: client(), headers: org(), path: { organization_id: orgId }, query: { limit: 1000 } });
    expect(listed.data!.map((d) => d.dataset.id)).not.toContain(created.id);
    // The tracking id is free again.
    const successor = await newDataset(orgId, { tracking_id: 'doomed' });
    expect(successor.id).not.toBe(created.id);

    await waitFor(async () => (await count('datasets', { id: created.id })) === 0, 'the purge to delete the dataset row');
    expect(await count('chunks', { dataset_id: created.id })).toBe(0);
    expect(await count('chunk_groups', { dataset_id: created.id })).toBe(0);
    expect(await count('files', { dataset_id: created.id })).toBe(0);
    expect(await lexicalIds(service.services.config.lexical, service.services.store.db, created.id, 'pelican')).toEqual([]);
  });

  it('deletes by tracking id, which must name the SVC-Dataset dataset', async () => {
    const a = await newDataset(orgId, { tracking_id: 'del-a' });
    const b = await newDataset(orgId, { tracking_id: 'del-b' });
    const wrong = await deleteDatasetByTrackingId({ client: client(), headers: ds(a.id), path: { tracking_id: 'del-b' } });
    expect(wrong.response.status).toBe(400);
    expect(wrong.error!.message).toContain(b.id);
    expect((await deleteDatasetByTrackingId({ client: client(), headers: ds(a.id), path: { tracking_id: 'no-such' } })).response.status).toBe(404);
    expect((await deleteDatasetByTrackingId({ client: client(keys.admin), headers: ds(a.id), path: { tracking_id: 'del-a' } })).response.status).toBe(403);

    const { response } = await deleteDatasetByTrackingId({ client: client(keys.owner), headers: ds('del-a'), path: { tracking_id: 'del-a' } });
    expect(response.status).toBe(204);
    expect((await getDatasetByTrackingId({ client: client(), headers: org(), path: { tracking_id: 'del-a' } })).response.status).toBe(404);
    expect((await getDatasetByTrackingId({ client: client(), headers: org(), path: { tracking_id: 'del-b' } })).response.status).toBe(200);
    await waitFor(async () => (await count('datasets', { id: a.id })) === 0, 'the purge of the dataset');
  });

  it('refuses a mismatched path id, the admin role and a locked dataset, deleting nothing', async () => {
    const a = await newDataset();
    const b = await newDataset();
    const mismatch = await deleteDataset({ client: client(), headers: ds(a.id), path: { dataset_id: b.id } });
    expect(mismatch.response.status).toBe(400);
    expect((await deleteDataset({ client: client(keys.admin), headers: ds(a.id), path: { dataset_id: a.id } })).response.status).toBe(403);
    expect((await deleteDataset({ client: client(keys.read), headers: ds(a.id), path: { dataset_id: a.id } })).response.status).toBe(403);
    const locked = await newDataset(orgId, { server_configuration: { LOCKED: true } });
    const refused = await deleteDataset({ client: client(), headers: ds(locked.id), path: { dataset_id: locked.id } });
    expect(refused.response.status).toBe(400);
    expect(refused.error!.message).toMatch(/locked/);
    for (const id of [a.id, b.id, locked.id]) expect(await db()('datasets').where({ id }).first()).toMatchObject({ deleted: 0 });
  });
});

describe('PUT /api/dataset/clear/{dataset_id}', () => {
  it('empties the dataset in the background, keeps it, and reports the deleted chunks as an event', async () => {
    const created = await newDataset(orgId, { tracking_id: 'to-clear', server_configuration: { BM25_K: 2 } });
    const chunkIds = await seedChunks(created.id, [{ html: '<p>heron nest</p>' }, { html: '<p>heron call</p>' }, { html: '<p>heron flight</p>' }]);
    const groupId = await seedGroup(db(), created.id);
    await db()('chunk_group_bookmarks').insert({ group_id: groupId, chunk_id: chunkIds[0] });
    await seedFile(db(), created.id);
    const bystander = await newDataset();
    await seedChunks(bystander.id, [{ html: '<p>heron</p>' }]);

    const { response } = await clearDataset({ client: client(keys.owner), headers: ds(created.id), path: { dataset_id: created.id } });
    expect(response.status).toBe(204);

    let events: { event_type: string; event_data: string }[] = [];
    await waitFor(async () => {
      events = (await getEvents({ client: client(), headers: ds(created.id), body: { event_types: ['bulk_chunks_deleted'] } })).data!.events;
      return events.length > 0;
    }, 'the bulk_chunks_deleted event');
    expect(JSON.parse(events[0].event_data)).toMatchObject({ chunks_deleted: 3 });
    expect(await count('chunks', { dataset_id: created.id })).toBe(0);
    expect(await count('chunk_groups', { dataset_id: created.id })).toBe(0);
    expect(await count('files', { dataset_id: created.id })).toBe(0);
    expect(await lexicalIds(service.services.config.lexical, service.services.store.db, created.id, 'heron')).toEqual([]);
    // The dataset stays, configuration and all; others are untouched.
    const kept = await getDataset({ client: client(), headers: ds('to-clear'), path: { dataset_id: created.id } });
    expect(kept.data).toMatchObject({ id: created.id, tracking_id: 'to-clear' });
    expect(kept.data!.server_configuration).toMatchObject({ BM25_K: 2 });
    expect(await count('chunks', { dataset_id: bystander.id })).toBe(1);
    expect(await lexicalIds(service.services.config.lexical, service.services.store.db, bystander.id, 'heron')).toHaveLength(1);
  });

  it('refuses a mismatched path id, the admin role and a locked dataset', async () => {
    const a = await newDataset();
    const b = await newDataset();
    await seedChunks(a.id, [{}]);
    expect((await clearDataset({ client: client(), headers: ds(a.id), path: { dataset_id: b.id } })).response.status).toBe(400);
    expect((await clearDataset({ client: client(keys.admin), headers: ds(a.id), path: { dataset_id: a.id } })).response.status).toBe(403);
    const locked = await newDataset(orgId, { server_configuration: { LOCKED: true } });
    const refused = await clearDataset({ client: client(), headers: ds(locked.id), path: { dataset_id: locked.id } });
    expect(refused.response.status).toBe(400);
    expect(refused.error!.message).toMatch(/locked/);
    expect((await service.request('PUT', '/api/dataset/clear/not-a-uuid', { headers: { authorization: ADMIN_KEY, ...ds(a.id) } })).status).toBe(400);
    expect(await count('chunks', { dataset_id: a.id })).toBe(1);
  });
});

describe('POST /api/dataset/clone', () => {
  it('without chunks: a new dataset with the same configuration, empty', async () => {
    const source = await newDataset(orgId, { server_configuration: { DISTANCE_METRIC: 'manhattan', SYSTEM_PROMPT: 'Be brief.' } });
    await seedChunks(source.id, [{}]);
    const { data, response } = await cloneDataset({
      client: client(keys.owner),
      headers: org(),
      body: { dataset_to_clone: source.id, dataset_name: 'copy', tracking_id: 'copy-1' },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ name: 'copy', tracking_id: 'copy-1', organization_id: orgId, deleted: 0 });
    expect(data!.id).not.toBe(source.id);
    expect(data!.server_configuration).toEqual(source.server_configuration);
    expect(await count('chunks', { dataset_id: data!.id })).toBe(0);
  });

  it('with chunks: copies chunks (every column), groups and bookmarks under new ids and indexes the copies', async () => {
    const source = await newDataset(orgId, { tracking_id: 'clone-source' });
    const sourceChunks = await seedChunks(source.id, [
      { html: '<p>albatross <b>wingspan</b></p>', tags: ['birds'], tracking_id: 'alb' },
      { html: '<p>puffin colony</p>', tags: ['birds', 'north'] },
      { html: '<p>penguin &amp; albatross</p>' },
    ]);
    const groupId = await seedGroup(db(), source.id, { tracking_id: 'seabirds', name: 'Seabirds', tag_set: ['sea'] });
    await db()('chunk_group_bookmarks').insert([
      { group_id: groupId, chunk_id: sourceChunks[0] },
      { group_id: groupId, chunk_id: sourceChunks[1] },
    ]);

    const { data: clone, response } = await cloneDataset({
      client: client(),
      headers: org(),
      body: { dataset_to_clone: source.id, dataset_name: 'birds copy', clone_chunks: true },
    });
    expect(response.status).toBe(200);
    // The clone copies chunks, groups, bookmarks, then indexes: with PostgreSQL's lexical index the
    // copied rows are searchable before the bookmarks are copied, so both are waited for.
    const cloneBookmarks = async () =>
      Number(
        (
          await db()('chunk_group_bookmarks')
            .join('chunk_groups', 'chunk_groups.id', 'chunk_group_bookmarks.group_id')
            .where('chunk_groups.dataset_id', clone!.id)
            .count({ n: '*' })
        )[0].n,
      );
    await waitFor(
      async () =>
        (await lexicalIds(service.services.config.lexical, service.services.store.db, clone!.id, 'albatross')).length === 2 && (await cloneBookmarks()) === 2,
      'the copies to be indexed and bookmarked',
    );

    const copies = await db()('chunks').where({ dataset_id: clone!.id }).orderBy('tracking_id');
    expect(copies).toHaveLength(3);
    for (const copy of copies) expect(sourceChunks).not.toContain(copy.id);
    const original = await db()('chunks').where({ dataset_id: source.id, tracking_id: 'alb' }).first();
    const copied = copies.find((c) => c.tracking_id === 'alb');
    const { id: _a, dataset_id: _b, ...originalColumns } = original;
    const { id: _c, dataset_id: _d, ...copiedColumns } = copied;
    expect(copiedColumns).toEqual(originalColumns);

    const hits = await lexicalIds(service.services.config.lexical, service.services.store.db, clone!.id, 'albatross');
    expect(hits).toEqual(
      copies
        .filter((c) => c.chunk_html.includes('albatross'))
        .map((c) => c.id)
        .sort(),
    );
    expect(await lexicalIds(service.services.config.lexical, service.services.store.db, clone!.id, 'wingspan')).toHaveLength(1);
    // The source keeps its own index entries.
    expect(await lexicalIds(service.services.config.lexical, service.services.store.db, source.id, 'albatross')).toHaveLength(2);

    const groups = await db()('chunk_groups').where({ dataset_id: clone!.id });
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ tracking_id: 'seabirds', name: 'Seabirds', tag_set: ['sea'] });
    expect(groups[0].id).not.toBe(groupId);
    const bookmarked = await db()('chunk_group_bookmarks')
      .where({ group_id: groups[0].id })
      .join('chunks', 'chunks.id', 'chunk_group_bookmarks.chunk_id')
      .pluck('chunks.chunk_html');
    expect(bookmarked.sort()).toEqual(['<p>albatross <b>wingspan</b></p>', '<p>puffin colony</p>']);

    const usage = await getUsageByDatasetId({ client: client(), headers: ds(clone!.id), path: { dataset_id: clone!.id } });
    expect(usage.data!.chunk_count).toBe(3);
  });

  it('refuses unknown and foreign sources, taken tracking ids, bad bodies and the admin role, writing nothing', async () => {
    const source = await newDataset(orgId, { tracking_id: 'clone-taken' });
    const foreign = await newDataset(otherOrgId);
    const before = await count('datasets', { organization_id: orgId });
    const call = (body: unknown, key = ADMIN_KEY) => service.request('POST', '/api/dataset/clone', { headers: { authorization: key, ...org() }, body });
    expect((await call({ dataset_to_clone: UNKNOWN, dataset_name: 'x' })).status).toBe(404);
    expect((await call({ dataset_to_clone: foreign.id, dataset_name: 'x' })).status).toBe(404);
    const taken = await call({ dataset_to_clone: source.id, dataset_name: 'x', tracking_id: 'clone-taken' });
    expect(taken.status).toBe(400);
    expect(taken.body.message).toMatch(/clone-taken/);
    expect((await call({ dataset_to_clone: 'nope', dataset_name: 'x' })).status).toBe(400);
    expect((await call({ dataset_to_clone: source.id })).status).toBe(400);
    expect((await call({ dataset_to_clone: source.id, dataset_name: 'x', clone_chunks: 'yes' })).status).toBe(400);
    expect((await call({ dataset_to_clone: source.id, dataset_name: 'x' }, keys.admin)).status).toBe(403);
    expect(await count('datasets', { organization_id: orgId })).toBe(before);
  });

  it('checks the plan for the dataset and the chunks it would copy', async () => {
    const limited = await newOrg('Clone limited');
    const source = await newDataset(limited);
    await seedChunks(source.id, [{}, {}, {}]);
    await setPlan(limited, { chunk_count: 5, dataset_count: 10 });
    const over = await cloneDataset({ client: client(), headers: org(limited), body: { dataset_to_clone: source.id, dataset_name: 'x', clone_chunks: true } });
    expect(over.response.status).toBe(426);
    expect(over.error!.message).toMatch(/allows 5 chunks/);
    expect(await count('datasets', { organization_id: limited })).toBe(1);
    // Without the chunks it fits.
    const empty = await cloneDataset({ client: client(), headers: org(limited), body: { dataset_to_clone: source.id, dataset_name: 'x' } });
    expect(empty.response.status).toBe(200);
    await setPlan(limited, { dataset_count: 2 });
    const noRoom = await cloneDataset({ client: client(), headers: org(limited), body: { dataset_to_clone: source.id, dataset_name: 'y' } });
    expect(noRoom.response.status).toBe(426);
    expect(await count('datasets', { organization_id: limited })).toBe(2);
  });
});
