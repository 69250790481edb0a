// Chunks over HTTP: create (one, a batch, upsert), read in both API versions, update, delete (one,
// by tracking id, by filter), scroll, split; every write reaches the database, the vector index and
// the lexical index, and bad input writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bulkDeleteChunk,
  createChunk,
  createDataset,
  createOrganization,
  deleteChunk,
  deleteChunkByTrackingId,
  getChunkById,
  getChunkByTrackingId,
  getChunksByIds,
  getChunksByTrackingIds,
  scrollDatasetChunks,
  splitHtmlContent,
  updateChunk,
  updateChunkByTrackingId,
} from '../../sdk/src/generated/sdk.gen.js';
import type { ChunkMetadata, ChunkReqPayload } from '../../sdk/src/generated/types.gen.js';
import { BuiltinEmbedder } from '../../server/engines/embeddings/builtin.js';
import { retrieve } from '../../server/search/retrieval/index.js';
import { vectorLiteral } from '../../server/store/vectors.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
const db = () => service.services.store.db;

async function newDataset(name = 'docs'): Promise<{ id: string; headers: { 'SVC-Dataset': string } }> {
  const { data } = await createDataset({ client: service.client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: name } });
  return { id: data!.id, headers: { 'SVC-Dataset': data!.id } };
}

async function create(headers: { 'SVC-Dataset': string }, body: ChunkReqPayload | ChunkReqPayload[]) {
  const result = await createChunk({ client: service.client(), headers, body });
  expect(result.response.status, JSON.stringify(result.error)).toBe(200);
  return result.data!.chunk_metadata;
}

/** The ids a full-text search finds for a query, best first. */
async function lexicalIds(datasetId: string, query: string): Promise<string[]> {
  const dataset = await service.services.store.db('datasets').where({ id: datasetId }).first();
  return (await retrieve(service.services, 'fulltext', { dataset, query, limit: 10, offset: 0 })).hits.map((h) => h.id);
}

/** The ids pgvector finds nearest to a text (cosine, the default metric), through the dataset's index. */
async function nearestIds(datasetId: string, text: string, limit = 3): Promise<string[]> {
  const [vector] = await new BuiltinEmbedder(384).embed([text], 'query');
  const { rows } = await db().raw(`select chunk_id from chunk_vectors where dataset_id = ? order by embedding::vector(384) <=> ?::vector(384) limit ?`, [
    datasetId,
    vectorLiteral(vector),
    limit,
  ]);
  return rows.map((r: { chunk_id: string }) => r.chunk_id);
}

async function countRows(table: string, datasetId: string): Promise<number> {
  const [row] = await db()(table).where({ dataset_id: datasetId }).count<{ count: string }[]>('* as count');
  return Number(row.count);
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Chunks' } })).data!.id;
});
afterAll(async () => {
  await service?.stop();
});

describe('create', () => {
  it('stores a chunk with every field and returns its record', async () => {
    const { headers } = await newDataset();
    const chunk = (await create(headers, {
      chunk_html: '<p>Our <b>refund</b> policy</p>',
      tracking_id: 'refunds',
      link: 'https://example.com/refunds',
      tag_set: ['policy', 'billing'],
      metadata: { locale: 'en', rank: 3 },
      num_value: 9.5,
      time_stamp: '2026-03-04T05:06:07',
      location: { lat: 52.37, lon: 4.89 },
      image_urls: ['https://example.com/a.png'],
      weight: 2,
    })) as ChunkMetadata;
    expect(chunk).toMatchObject({
      chunk_html: '<p>Our <b>refund</b> policy</p>',
      tracking_id: 'refunds',
      link: 'https://example.com/refunds',
      tag_set: ['policy', 'billing'],
      metadata: { locale: 'en', rank: 3 },
      num_value: 9.5,
      time_stamp: '2026-03-04T05:06:07',
      location: { lat: 52.37, lon: 4.89 },
      image_urls: ['https://example.com/a.png'],
      weight: 2,
    });
  });

  it('makes a created chunk findable at once by its own words (lexical) and its own text (vector)', async () => {
    const { id, headers } = await newDataset();
    const [a, b] = (await create(headers, [
      { chunk_html: '<h1>Shipping</h1><p>Parcels leave our warehouse within two days.</p>' },
      { chunk_html: 'Gift cards never expire and can be used online.' },
    ])) as ChunkMetadata[];
    expect(await lexicalIds(id, 'warehouse parcels')).toEqual([a.id]);
    expect(await lexicalIds(id, 'gift cards')).toEqual([b.id]);
    expect((await nearestIds(id, 'gift cards expire'))[0]).toBe(b.id);
    // The HTML's markup is not indexed as words.
    expect(await lexicalIds(id, 'h1')).toEqual([]);
  });

  it('takes concurrent first writes to a new dataset', async () => {
    const { id, headers } = await newDataset();
    const replies = await Promise.all(
      [0, 1, 2].map((n) =>
        createChunk({ client: service.client(), headers, body: Array.from({ length: 20 }, (_, i) => ({ chunk_html: `writer ${n} chunk ${i}` })) }),
      ),
    );
    expect(replies.map((r) => r.response.status)).toEqual([200, 200, 200]);
    expect(await countRows('chunk_vectors', id)).toBe(60);
  });

  it('answers a batch as a list, in order, and takes up to 120 chunks', async () => {
    const { id, headers } = await newDataset();
    const batch = Array.from({ length: 120 }, (_, i) => ({ chunk_html: `item number ${i}`, tracking_id: `item-${i}` }));
    const created = (await create(headers, batch)) as ChunkMetadata[];
    expect(created.map((c) => c.tracking_id)).toEqual(batch.map((c) => c.tracking_id));
    expect(await countRows('chunk_vectors', id)).toBe(120);
  });

  it('refuses 121 chunks, an unknown group id, a missing chunk_html and a bad time stamp, writing nothing', async () => {
    const { id, headers } = await newDataset();
    const call = (body: unknown) => service.request('POST', '/api/chunk', { headers: { authorization: ADMIN_KEY, ...headers }, body });
    const tooMany = await call(Array.from({ length: 121 }, () => ({ chunk_html: 'x' })));
    expect(tooMany.status).toBe(400);
    const unknownGroup = await call([{ chunk_html: 'a' }, { chunk_html: 'b', group_ids: ['00000000-0000-4000-8000-00000000abcd'] }]);
    expect(unknownGroup.status).toBe(400);
    expect(unknownGroup.body.message).toMatch(/group_ids/);
    const noHtml = await call([{ chunk_html: 'a' }, { tracking_id: 'no-html' }]);
    expect(noHtml.status).toBe(400);
    expect(noHtml.body.message).toMatch(/\[1\]\.chunk_html/);
    const badTime = await call({ chunk_html: 'a', time_stamp: 'last tuesday' });
    expect(badTime.body.message).toMatch(/time_stamp/);
    expect((await call({ chunk_html: 42 })).status).toBe(400);
    expect(
      (
        await call([
          { chunk_html: 'a', tracking_id: 't' },
          { chunk_html: 'b', tracking_id: 't' },
        ])
      ).status,
    ).toBe(400);
    expect(await countRows('chunks', id)).toBe(0);
    expect(await lexicalIds(id, 'a b')).toEqual([]);
  });

  it('with upsert_by_tracking_id false leaves an existing chunk alone; with true updates it everywhere', async () => {
    const { id, headers } = await newDataset();
    const first = (await create(headers, { chunk_html: 'original wording', tracking_id: 'doc-1' })) as ChunkMetadata;
    const ignored = (await create(headers, { chunk_html: 'replacement wording', tracking_id: 'doc-1' })) as ChunkMetadata;
    expect(ignored).toMatchObject({ id: first.id, chunk_html: 'original wording' });
    const updated = (await create(headers, { chunk_html: 'brand new phrasing', tracking_id: 'doc-1', upsert_by_tracking_id: true })) as ChunkMetadata;
    expect(updated).toMatchObject({ id: first.id, chunk_html: 'brand new phrasing' });
    expect(await lexicalIds(id, 'original')).toEqual([]);
    expect(await lexicalIds(id, 'phrasing')).toEqual([first.id]);
    expect(await countRows('chunks', id)).toBe(1);
  });

  it('places chunks in existing groups and creates groups named by tracking id', async () => {
    const { id, headers } = await newDataset();
    const [existing] = await db()('chunk_groups').insert({ dataset_id: id, name: 'existing' }).returning('id');
    const chunk = (await create(headers, { chunk_html: 'grouped', group_ids: [existing.id], group_tracking_ids: ['new-group'] })) as ChunkMetadata;
    const groups = await db()('chunk_group_bookmarks')
      .join('chunk_groups', 'chunk_groups.id', 'group_id')
      .where({ chunk_id: chunk.id })
      .pluck('chunk_groups.name');
    expect(groups.sort()).toEqual(['existing', 'new-group']);
  });

  it('moves the vector towards the semantic boost phrase, changing what is nearest', async () => {
    const { id, headers } = await newDataset();
    const [plain, boosted] = (await create(headers, [
      { chunk_html: 'banana bread with walnuts' },
      { chunk_html: 'engine oil change intervals', semantic_boost: { phrase: 'banana smoothie recipe', distance_factor: 0.95 } },
    ])) as ChunkMetadata[];
    expect((await nearestIds(id, 'banana smoothie recipe'))[0]).toBe(boosted.id);
    expect((await nearestIds(id, 'banana bread walnuts'))[0]).toBe(plain.id);
  });

  it('multiplies the weight of the full-text boost phrase in the lexical representation', async () => {
    const { id, headers } = await newDataset();
    const [plain, boosted] = (await create(headers, [
      { chunk_html: 'apple pie with cinnamon and a crisp golden crust' },
      { chunk_html: 'apple tart with cinnamon and a crisp golden crust', fulltext_boost: { phrase: 'apple', boost_factor: 4 } },
    ])) as ChunkMetadata[];
    // The phrase counts four times in the boosted chunk's terms, which BM25 ranks first on every engine.
    expect(await lexicalIds(id, 'apple')).toEqual([boosted.id, plain.id]);
  });

  it('averages the vectors of the pieces of a long text with split_avg', async () => {
    const { headers } = await newDataset();
    const long = Array.from({ length: 40 }, (_, i) => `Sentence ${i} talks about topic ${i % 7} in detail.`).join(' ');
    const [whole, averaged] = (await create(headers, [{ chunk_html: long }, { chunk_html: long, split_avg: true }])) as ChunkMetadata[];
    const vectors = await db()('chunk_vectors').whereIn('chunk_id', [whole.id, averaged.id]).select('chunk_id', db().raw('embedding::text as embedding'));
    const byId = new Map(vectors.map((v: { chunk_id: string; embedding: string }) => [v.chunk_id, v.embedding]));
    expect(byId.get(averaged.id)).not.toEqual(byId.get(whole.id));
  });

  it('enforces the plan: chunk_count and high_priority, writing nothing', async () => {
    const small = (await createOrganization({ client: service.client(), body: { name: 'Small' } })).data!.id;
    const [plan] = await db()('plans')
      .insert({ name: `tiny-${small}`, chunk_count: 2, dataset_count: 5, file_storage: 1000, message_count: 10, user_count: 2, high_priority: false })
      .returning('id');
    await db()('subscriptions').where({ organization_id: small }).update({ plan_id: plan.id });
    const { data } = await createDataset({ client: service.client(), headers: { 'SVC-Organization': small }, body: { dataset_name: 'small' } });
    const headers = { 'SVC-Dataset': data!.id };
    const over = await createChunk({ client: service.client(), headers, body: [{ chunk_html: 'a' }, { chunk_html: 'b' }, { chunk_html: 'c' }] });
    expect(over.response.status).toBe(426);
    expect(over.error!.message).toMatch(/allows 2 chunks/);
    const priority = await createChunk({ client: service.client(), headers, body: { chunk_html: 'a', high_priority: true } });
    expect(priority.response.status).toBe(426);
    expect(await countRows('chunks', data!.id)).toBe(0);
    expect(await lexicalIds(data!.id, 'a b c')).toEqual([]);
    expect((await createChunk({ client: service.client(), headers, body: [{ chunk_html: 'a' }, { chunk_html: 'b' }] })).response.status).toBe(200);
  });
});

describe('read', () => {
  it('gets chunks by id and tracking id in V1 (default: tag_set as text) and V2 (a list)', async () => {
    const { headers } = await newDataset();
    const chunk = (await create(headers, { chunk_html: 'x', tracking_id: 'tid', tag_set: ['a', 'b'] })) as ChunkMetadata;
    const v1 = await getChunkById({ client: service.client(), headers, path: { chunk_id: chunk.id } });
    expect(v1.data).toMatchObject({ id: chunk.id, tag_set: 'a,b' });
    const v2 = await getChunkByTrackingId({ client: service.client(), headers: { ...headers, 'X-API-Version': 'V2' }, path: { tracking_id: 'tid' } });
    expect(v2.data).toMatchObject({ id: chunk.id, tag_set: ['a', 'b'] });
    const missing = await getChunkByTrackingId({ client: service.client(), headers, path: { tracking_id: 'nope' } });
    expect(missing.response.status).toBe(404);
  });

  it('gets many by ids and tracking ids in the order asked, leaving unknown ones out', async () => {
    const { headers } = await newDataset();
    const chunks = (await create(headers, [
      { chunk_html: 'one', tracking_id: 't1' },
      { chunk_html: 'two', tracking_id: 't2' },
      { chunk_html: 'three', tracking_id: 't3' },
    ])) as ChunkMetadata[];
    const byIds = await getChunksByIds({
      client: service.client(),
      headers,
      body: { ids: [chunks[2].id, '00000000-0000-4000-8000-00000000abcd', chunks[0].id] },
    });
    expect(byIds.data!.map((c) => c.id)).toEqual([chunks[2].id, chunks[0].id]);
    const byTracking = await getChunksByTrackingIds({ client: service.client(), headers, body: { tracking_ids: ['t2', 'zz', 't1'] } });
    expect(byTracking.data!.map((c) => c.tracking_id)).toEqual(['t2', 't1']);
    const none = await getChunksByIds({ client: service.client(), headers, body: { ids: ['00000000-0000-4000-8000-00000000abcd'] } });
    expect(none.response.status).toBe(404);
  });

  it('never shows a chunk of another dataset', async () => {
    const one = await newDataset('one');
    const two = await newDataset('two');
    const chunk = (await create(one.headers, { chunk_html: 'private', tracking_id: 'secret' })) as ChunkMetadata;
    expect((await getChunkById({ client: service.client(), headers: two.headers, path: { chunk_id: chunk.id } })).response.status).toBe(404);
    expect((await getChunkByTrackingId({ client: service.client(), headers: two.headers, path: { tracking_id: 'secret' } })).response.status).toBe(404);
    expect((await deleteChunk({ client: service.client(), headers: two.headers, path: { chunk_id: chunk.id } })).response.status).toBe(404);
    expect((await getChunkById({ client: service.client(), headers: one.headers, path: { chunk_id: chunk.id } })).response.status).toBe(200);
  });

  it('scrolls with a filter, by id pages and by a sort field', async () => {
    const { headers } = await newDataset();
    await create(
      headers,
      Array.from({ length: 25 }, (_, i) => ({ chunk_html: `c${i}`, tracking_id: `c${i}`, num_value: i, tag_set: i % 2 ? ['odd'] : ['even'] })),
    );
    const seen: string[] = [];
    let offset: string | undefined;
    for (;;) {
      const page = await scrollDatasetChunks({ client: service.client(), headers, body: { page_size: 10, offset_chunk_id: offset } });
      seen.push(...page.data!.chunks.map((c) => c.tracking_id!));
      if (page.data!.chunks.length < 10) break;
      offset = page.data!.chunks.at(-1)!.id;
    }
    expect(seen.sort()).toEqual(Array.from({ length: 25 }, (_, i) => `c${i}`).sort());
    const odd = await scrollDatasetChunks({
      client: service.client(),
      headers,
      body: { page_size: 5, filters: { must: [{ field: 'tag_set', match_any: ['odd'] }] }, sort_by: { field: 'num_value', direction: 'desc' } },
    });
    expect(odd.data!.chunks.map((c) => c.num_value)).toEqual([23, 21, 19, 17, 15]);
    const next = await scrollDatasetChunks({
      client: service.client(),
      headers,
      body: {
        page_size: 5,
        offset_chunk_id: odd.data!.chunks.at(-1)!.id,
        filters: { must: [{ field: 'tag_set', match_any: ['odd'] }] },
        sort_by: { field: 'num_value', direction: 'desc' },
      },
    });
    expect(next.data!.chunks.map((c) => c.num_value)).toEqual([13, 11, 9, 7, 5]);
  });
});

describe('update', () => {
  it('re-embeds and re-indexes changed content, and keeps the fields not given', async () => {
    const { id, headers } = await newDataset();
    const chunk = (await create(headers, { chunk_html: 'old words about kayaks', tracking_id: 'k', tag_set: ['boats'], num_value: 1 })) as ChunkMetadata;
    const before = await db()('chunk_vectors').where({ chunk_id: chunk.id }).first(db().raw('embedding::text as e'));
    const reply = await updateChunk({ client: service.client(), headers, body: { chunk_id: chunk.id, chunk_html: 'new words about bicycles', num_value: 7 } });
    expect(reply.response.status).toBe(204);
    expect(await lexicalIds(id, 'kayaks')).toEqual([]);
    expect(await lexicalIds(id, 'bicycles')).toEqual([chunk.id]);
    const after = await db()('chunk_vectors').where({ chunk_id: chunk.id }).first(db().raw('embedding::text as e'));
    expect(after.e).not.toEqual(before.e);
    const fetched = await getChunkById({ client: service.client(), headers: { ...headers, 'X-API-Version': 'V2' }, path: { chunk_id: chunk.id } });
    expect(fetched.data).toMatchObject({ chunk_html: 'new words about bicycles', num_value: 7, tag_set: ['boats'], tracking_id: 'k' });
    await updateChunkByTrackingId({ client: service.client(), headers, body: { tracking_id: 'k', metadata: { reviewed: true }, weight: 3 } });
    const again = await getChunkByTrackingId({ client: service.client(), headers: { ...headers, 'X-API-Version': 'V2' }, path: { tracking_id: 'k' } });
    expect(again.data).toMatchObject({ metadata: { reviewed: true }, weight: 3, chunk_html: 'new words about bicycles' });
  });

  it('refuses both or neither of chunk_id and tracking_id, and unknown chunks', async () => {
    const { headers } = await newDataset();
    const chunk = (await create(headers, { chunk_html: 'x', tracking_id: 'x' })) as ChunkMetadata;
    const call = (body: unknown) => service.request('PUT', '/api/chunk', { headers: { authorization: ADMIN_KEY, ...headers }, body });
    expect((await call({ chunk_id: chunk.id, tracking_id: 'x', link: 'l' })).status).toBe(400);
    expect((await call({ link: 'l' })).status).toBe(400);
    expect((await call({ chunk_id: '00000000-0000-4000-8000-00000000abcd', link: 'l' })).status).toBe(404);
    expect((await call({ tracking_id: 'x', weight: 'heavy' })).status).toBe(400);
  });
});

describe('delete', () => {
  it('deletes by id and by tracking id from the database, the vectors and the lexical index', async () => {
    const { id, headers } = await newDataset();
    const [a, b] = (await create(headers, [
      { chunk_html: 'zebra crossing', tracking_id: 'a', group_tracking_ids: ['g'] },
      { chunk_html: 'zebra stripes', tracking_id: 'b' },
    ])) as ChunkMetadata[];
    expect((await deleteChunk({ client: service.client(), headers, path: { chunk_id: a.id } })).response.status).toBe(204);
    expect((await deleteChunkByTrackingId({ client: service.client(), headers, path: { tracking_id: 'b' } })).response.status).toBe(204);
    expect(await lexicalIds(id, 'zebra')).toEqual([]);
    expect(await countRows('chunks', id)).toBe(0);
    expect(await countRows('chunk_vectors', id)).toBe(0);
    expect(await db()('chunk_group_bookmarks').whereIn('chunk_id', [a.id, b.id])).toEqual([]);
    expect((await deleteChunk({ client: service.client(), headers, path: { chunk_id: a.id } })).response.status).toBe(404);
  });

  it('deletes the chunks that match a filter, and refuses an empty filter', async () => {
    const { id, headers } = await newDataset();
    await create(headers, [
      { chunk_html: 'keep me', tag_set: ['keep'] },
      { chunk_html: 'drop me', tag_set: ['drop'] },
      { chunk_html: 'drop me too', tag_set: ['drop', 'x'] },
    ]);
    expect(
      (await bulkDeleteChunk({ client: service.client(), headers, body: { filter: { must: [{ field: 'tag_set', match_any: ['drop'] }] } } })).response.status,
    ).toBe(204);
    expect(await db()('chunks').where({ dataset_id: id }).pluck('chunk_html')).toEqual(['keep me']);
    expect(await lexicalIds(id, 'drop')).toEqual([]);
    const empty = await bulkDeleteChunk({ client: service.client(), headers, body: { filter: {} } });
    expect(empty.response.status).toBe(400);
    expect(await countRows('chunks', id)).toBe(1);
  });
});

describe('clone', () => {
  it('copies chunks with their vectors and index entries', async () => {
    const source = await newDataset('source');
    await create(source.headers, [
      { chunk_html: 'lighthouse keeper stories' },
      { chunk_html: 'harbour tides', fulltext_boost: { phrase: 'tides', boost_factor: 2 } },
    ]);
    const reply = await service.request('POST', '/api/dataset/clone', {
      headers: { authorization: ADMIN_KEY, 'SVC-Organization': orgId },
      body: { dataset_to_clone: source.id, dataset_name: 'copy', clone_chunks: true },
    });
    expect(reply.status).toBe(200);
    const target = reply.body.id as string;
    // The copy runs in the background: the rows (searchable by their stored terms) first, then their
    // vectors in a statement of their own. Waited for until both are there, or ten seconds.
    const copied = async () => (await lexicalIds(target, 'lighthouse')).length > 0 && (await countRows('chunk_vectors', target)) >= 2;
    for (let i = 0; i < 100 && !(await copied()); i++) await new Promise((r) => setTimeout(r, 100));
    const copies = await db()('chunks').where({ dataset_id: target }).pluck('id');
    expect(copies).toHaveLength(2);
    expect(await lexicalIds(target, 'lighthouse')).toHaveLength(1);
    expect(await countRows('chunk_vectors', target)).toBe(2);
    expect(copies).toContain((await nearestIds(target, 'lighthouse keeper'))[0]);
  });
});

describe('split_html_content', () => {
  it('splits at headings, each piece with the headings above it', async () => {
    const html = '<h1>Guide</h1><p>Intro text.</p><h2>Install</h2><p>Run the installer.</p><h2>Use</h2><p>Open the app.</p><h1>FAQ</h1><p>Ask us.</p>';
    const { data } = await splitHtmlContent({ client: service.client(), body: { chunk_html: html, body_remove_strings: ['the '] } });
    expect(data!.chunks).toEqual([
      { headings: ['Guide'], body: 'Intro text.' },
      { headings: ['Guide', 'Install'], body: 'Run installer.' },
      { headings: ['Guide', 'Use'], body: 'Open app.' },
      { headings: ['FAQ'], body: 'Ask us.' },
    ]);
  });
});

describe('volume', () => {
  it('creates 10,000 chunks in batches of 120 through the API', async () => {
    const { id, headers } = await newDataset('volume');
    const total = 10_000;
    for (let start = 0; start < total; start += 120) {
      const batch = Array.from({ length: Math.min(120, total - start) }, (_, i) => ({
        chunk_html: `<p>Document ${start + i} about subject ${(start + i) % 97} and topic ${(start + i) % 13}</p>`,
        tracking_id: `doc-${start + i}`,
        tag_set: [`t${(start + i) % 5}`],
      }));
      await create(headers, batch);
    }
    expect(await countRows('chunks', id)).toBe(total);
    expect(await countRows('chunk_vectors', id)).toBe(total);
    expect((await lexicalIds(id, 'Document 9999')).length).toBeGreaterThan(0);
  }, 600_000);
});
