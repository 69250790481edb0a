// The organization's top datasets over HTTP (POST /api/analytics/top): searches (whole days from the
// roll-ups, part days from the searches), RAG calls and recommendations counted per dataset in
// exact figures over ranges cut inside days, ten at most, most first; never a dataset of another
// organization or one being deleted; the admin role; bad input refused with nothing recorded.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, createOrganizationApiKey, getTopDatasets } from '../../sdk/src/generated/sdk.gen.js';
import type { GetTopDatasetsRequestBody } from '../../sdk/src/generated/types.gen.js';
import { seedDataset, seedRagQuery, seedRecommendation } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
const db = () => service.services.store.db;
let orgA: string;
let orgB: string;
/** Datasets of A: catalogue (tracking id `catalogue`), help (none), small, and one being deleted; B's big one. */
const d: Record<'catalogue' | 'help' | 'small' | 'gone' | 'big', string> = { catalogue: '', help: '', small: '', gone: '', big: '' };

async function searches(datasetId: string, at: string[], searchType = 'hybrid'): Promise<void> {
  // One statement, as the service records a batch: the roll-up triggers add it up.
  await db()('search_queries').insert(
    at.map((when) => ({
      id: randomUUID(),
      dataset_id: datasetId,
      search_type: searchType,
      query: 'boots',
      request_params: JSON.stringify({ search_type: 'hybrid' }),
      latency_ms: 5,
      top_score: 0.5,
      results: [],
      created_at: `${when}Z`,
    })),
  );
}

async function top(body: GetTopDatasetsRequestBody, organizationId = orgA) {
  const { data } = await getTopDatasets({ client: service.client(), headers: { 'SVC-Organization': organizationId }, body, throwOnError: true });
  return data;
}

/** The answer as [dataset name, count] pairs. */
const named = (rows: { dataset_id: string; total_queries: number }[]) =>
  rows.map((r) => [Object.entries(d).find(([, id]) => id === r.dataset_id)?.[0] ?? r.dataset_id, r.total_queries]);

beforeAll(async () => {
  service = await startTestService();
  orgA = (await createOrganization({ client: service.client(), body: { name: 'Alpha' } })).data!.id;
  orgB = (await createOrganization({ client: service.client(), body: { name: 'Beta' } })).data!.id;
  d.catalogue = (await seedDataset(db(), orgA, { name: 'catalogue', tracking_id: 'catalogue' })).id;
  d.help = (await seedDataset(db(), orgA, { name: 'help' })).id;
  d.small = (await seedDataset(db(), orgA, { name: 'small' })).id;
  d.gone = (await seedDataset(db(), orgA, { name: 'gone' })).id;
  d.big = (await seedDataset(db(), orgB, { name: 'big' })).id;

  await searches(d.catalogue, [
    '2024-03-01 10:00:00',
    '2024-03-01 13:00:00',
    '2024-03-02 08:00:00',
    '2024-03-02 20:00:00',
    '2024-03-03 05:00:00',
    '2024-03-03 07:00:00',
  ]);
  await searches(d.help, ['2024-03-01 12:30:00', '2024-03-02 09:00:00', '2024-03-03 05:59:00']);
  await searches(d.small, ['2024-03-02 10:00:00'], 'rag_chunks');
  await searches(
    d.gone,
    Array.from({ length: 10 }, () => '2024-03-02 10:00:00'),
  );
  await searches(
    d.big,
    Array.from({ length: 20 }, () => '2024-03-02 10:00:00'),
  );

  for (const [dataset, at] of [
    [d.help, '2024-03-01T10:00:00Z'],
    [d.help, '2024-03-02T10:00:00Z'],
    [d.small, '2024-03-02T11:00:00Z'],
    ...Array.from({ length: 5 }, () => [d.gone, '2024-03-02T10:00:00Z']),
    ...Array.from({ length: 5 }, () => [d.big, '2024-03-02T10:00:00Z']),
  ]) {
    await seedRagQuery(db(), dataset, { created_at: new Date(at) });
  }
  await db()('datasets').where({ id: d.gone }).update({ deleted: 1 });
});
afterAll(async () => {
  await service?.stop();
});

describe('search', () => {
  it('every search of each dataset, most first; none of another organization or of a dataset being deleted', async () => {
    expect(await top({ type: 'search' })).toEqual([
      { dataset_id: d.catalogue, dataset_tracking_id: 'catalogue', total_queries: 6 },
      { dataset_id: d.help, dataset_tracking_id: null, total_queries: 3 },
      { dataset_id: d.small, dataset_tracking_id: null, total_queries: 1 },
    ]);
    expect(named(await top({ type: 'search' }, orgB))).toEqual([['big', 20]]);
  });

  it('a range cut inside days: whole days and the hours at either end add up exactly', async () => {
    expect(named(await top({ type: 'search', date_range: { gte: '2024-03-01 12:00', lt: '2024-03-03 06:00' } }))).toEqual([
      ['catalogue', 4],
      ['help', 3],
      ['small', 1],
    ]);
    expect(named(await top({ type: 'search', date_range: { gt: '2024-03-01 12:30', lte: '2024-03-03 05:59' } }))).toEqual([
      ['catalogue', 4],
      ['help', 2],
      ['small', 1],
    ]);
    // One each before 13:00 on 1 March: ties, by dataset id.
    const early = await top({ type: 'search', date_range: { lt: '2024-03-01 13:00' } });
    expect(early.map((r) => [r.dataset_id, r.total_queries])).toEqual([d.catalogue, d.help].sort().map((id) => [id, 1]));
  });

  it('whole days only, ties by dataset id', async () => {
    const ties = [d.help, d.small].sort().map((id) => ({ dataset_id: id, dataset_tracking_id: null, total_queries: 1 }));
    expect(await top({ type: 'search', date_range: { gte: '2024-03-02', lt: '2024-03-03' } })).toEqual([
      { dataset_id: d.catalogue, dataset_tracking_id: 'catalogue', total_queries: 2 },
      ...ties,
    ]);
  });

  it('a range with no searches lists nothing', async () => {
    expect(await top({ type: 'search', date_range: { gte: '2020-01-01', lt: '2020-02-01' } })).toEqual([]);
  });
});

describe('rag and recommendation', () => {
  it('RAG calls per dataset, in the range', async () => {
    expect(named(await top({ type: 'rag' }))).toEqual([
      ['help', 2],
      ['small', 1],
    ]);
    const day2 = await top({ type: 'rag', date_range: { gte: '2024-03-02', lt: '2024-03-03' } });
    expect(day2.map((r) => [r.dataset_id, r.total_queries])).toEqual([d.help, d.small].sort().map((id) => [id, 1]));
  });

  it('recommendations: the ten datasets with most, of twelve', async () => {
    const org = (await createOrganization({ client: service.client(), body: { name: 'Many' } })).data!.id;
    const datasets: string[] = [];
    for (let k = 1; k <= 12; k++) {
      const dataset = (await seedDataset(db(), org, { name: `shop ${k}`, tracking_id: `shop-${k}` })).id;
      datasets.push(dataset);
      for (let n = 0; n < k; n++) await seedRecommendation(db(), dataset, { created_at: new Date(Date.UTC(2024, 2, 1, n)) });
    }
    const rows = await top({ type: 'recommendation' }, org);
    expect(rows.map((r) => [r.dataset_tracking_id, r.total_queries])).toEqual(Array.from({ length: 10 }, (_, i) => [`shop-${12 - i}`, 12 - i]));
    // Before 05:00 on 1 March: the first five hours of each, so five each from shop 5 up, ties by id.
    const early = await top({ type: 'recommendation', date_range: { lt: '2024-03-01 05:00' } }, org);
    expect(early.map((r) => r.total_queries)).toEqual([5, 5, 5, 5, 5, 5, 5, 5, 4, 3]);
    expect(early.slice(0, 8).map((r) => r.dataset_id)).toEqual(datasets.slice(4).sort());
    expect(await top({ type: 'recommendation' })).toEqual([]);
  });
});

describe('who may', () => {
  it('an admin key of the organization; a read key is refused', async () => {
    const key = async (role: 0 | 1) =>
      (
        await createOrganizationApiKey({
          client: service.client(),
          headers: { 'SVC-Organization': orgA },
          body: { name: `role ${role}`, role },
          throwOnError: true,
        })
      ).data.api_key;
    const [reader, admin] = [await key(0), await key(1)];
    const read = await getTopDatasets({ client: service.client(reader), headers: { 'SVC-Organization': orgA }, body: { type: 'search' } });
    expect([read.response.status, read.error?.message]).toEqual([403, expect.stringMatching(/admin/)]);
    const asAdmin = await getTopDatasets({ client: service.client(admin), headers: { 'SVC-Organization': orgA }, body: { type: 'search' } });
    expect([asAdmin.response.status, asAdmin.data?.length]).toEqual([200, 3]);
    // A's admin key names B's organization: not found, as an unknown one.
    const foreign = await getTopDatasets({ client: service.client(admin), headers: { 'SVC-Organization': orgB }, body: { type: 'search' } });
    expect(foreign.response.status).toBe(404);
  });
});

describe('bad input', () => {
  const recorded = async () =>
    Object.fromEntries(
      await Promise.all(
        ['search_queries', 'rag_queries', 'recommendation_queries', 'search_rollup_days', 'datasets'].map(async (t) => [
          t,
          Number((await db()(t).count({ n: '*' }))[0].n),
        ]),
      ),
    );
  let before: unknown;
  beforeAll(async () => {
    before = await recorded();
  });
  afterAll(async () => {
    expect(await recorded()).toEqual(before);
  });
  const post = (body: unknown) => service.request('POST', '/api/analytics/top', { headers: { authorization: ADMIN_KEY, 'SVC-Organization': orgA }, body });

  it('an unknown type is named', async () => {
    const reply = await post({ type: 'clusters' });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/type.*must be equal to one of the allowed values: search, rag, recommendation/);
  });

  it('a range that ends before it starts, a bound that is no instant', async () => {
    let reply = await post({ type: 'search', date_range: { gte: '2024-03-02', lt: '2024-03-01' } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/^date_range: the range starts .* after it ends/);
    reply = await post({ type: 'rag', date_range: { lte: 'tomorrow' } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/date_range\.lte: tomorrow is not a timestamp/);
  });

  it('no type, no body, no organization', async () => {
    for (const body of [{}, null, [], { type: 'search', date_range: 'last week' }]) {
      const reply = await post(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message).toBeTruthy();
    }
    const reply = await service.request('POST', '/api/analytics/top', { headers: { authorization: ADMIN_KEY }, body: { type: 'search' } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/SVC-Organization/i);
  });
});
