// Retrieval (semantic, fulltext, hybrid) against the engines of the mode: PGlite + Postgres
// full-text in the embedded project, PostgreSQL + pgvector + Typesense in the full project. One
// fixture dataset of 30 chunks on distinct topics; its chunks are written through the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { HttpError } from '../../server/errors.js';
import { countMatches, reciprocalRankFusion, retrieve } from '../../server/search/retrieval/index.js';
import { selective } from '../../server/search/filters/passing.js';
import { nearest, nearestAmong, semanticQuery, useIterativeScan } from '../../server/search/retrieval/semantic.js';
import type { RetrievalRequest, SearchType } from '../../server/search/types.js';
import { vectorIndexName } from '../../server/store/vectors.js';
import { mode } from '../support/env.js';
import { ALLOW_LOCAL_STAND_INS } from '../support/outbound.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
const db = () => service.services.store.db;

/** [tracking id, text, tags]; num_value is the position (1-based). */
const FIXTURE: [string, string, string[]][] = [
  ['refund', 'Refund policy: ask for a refund within thirty days of purchase and the money returns to your card.', ['billing', 'policy']],
  ['shipping', 'Parcels leave our warehouse within two business days and couriers deliver them nationwide.', ['logistics']],
  ['giftcard', 'Gift cards never expire and can be redeemed online or in any store.', ['billing']],
  ['password', 'Forgot your password? Use the reset link on the sign-in page to choose a new one.', ['account']],
  ['warranty-tv', 'Every television carries a two year warranty covering dead pixels and panel faults.', ['product', 'warranty']],
  ['warranty-laptop', 'Laptops come with a one year warranty; batteries are covered for six months.', ['product', 'warranty']],
  ['warranty-claim', 'To make a warranty claim, send the serial number and a photo of the fault.', ['support', 'warranty']],
  ['invoice', 'Invoices are emailed as PDF files after each payment and kept in your account history.', ['billing']],
  ['subscription', 'Cancel your subscription at any time; the plan stays active until the period ends.', ['billing', 'account']],
  ['recycling', 'We collect old electronics for recycling when we deliver a replacement appliance.', ['logistics']],
  ['kayak', 'Inflatable kayaks pack into a backpack and paddle well on calm lakes and rivers.', ['product']],
  ['espresso', 'Our espresso machine grinds beans fresh and steams milk for cappuccino and latte.', ['product']],
  ['privacy', 'We never sell personal data; read the privacy notice for the cookies we store.', ['policy']],
  ['accessibility', 'The website supports screen readers, keyboard navigation and high contrast themes.', ['support']],
  ['careers', 'Join our team: open positions in engineering, design and customer care.', ['company']],
  ['stores', 'Visit our flagship stores in Amsterdam, Berlin and Lisbon, open seven days a week.', ['company']],
  ['loyalty', 'Loyalty points are earned on every order and can pay for future purchases.', ['billing']],
  ['tracking', 'Track your parcel with the courier link in the dispatch email.', ['logistics']],
  ['returns-label', 'Print a prepaid returns label and drop the box at any post office.', ['logistics', 'policy']],
  ['twofactor', 'Protect your account with two-factor authentication using an authenticator app.', ['account']],
  ['bicycle', 'Electric bicycles reach twenty five kilometres per hour with pedal assistance.', ['product']],
  ['headphones', 'Noise cancelling headphones last thirty hours on one charge.', ['product']],
  ['installation', 'Our technicians install washing machines and connect the water supply.', ['support']],
  ['students', 'Students get a ten percent discount with a valid university email address.', ['billing']],
  ['climate', 'We offset the carbon emissions of every delivery through reforestation projects.', ['company']],
  ['outage', 'Scheduled maintenance may take the website offline for an hour on Sunday night.', ['support']],
  ['tent', 'A four person tent with a waterproof flysheet sets up in five minutes.', ['product', 'rare']],
  ['telescope', 'A reflecting telescope reveals the rings of Saturn and the moons of Jupiter.', ['product', 'rare']],
  ['sourdough', 'Sourdough bread needs a lively starter, a long proof and a very hot oven.', ['recipes', 'rare']],
  ['chess', 'The Sicilian defence is a sharp reply to the king pawn opening in chess.', ['games']],
];

let dataset: DatasetRow;
/** Chunk id by tracking id. */
const ids = new Map<string, string>();
const idOf = (tracking: string) => ids.get(tracking)!;
const trackingOf = (id: string) => [...ids].find(([, v]) => v === id)?.[0];

async function addChunks(target: DatasetRow, chunks: T.ChunkReqPayload[]): Promise<T.ChunkMetadata[]> {
  const created: T.ChunkMetadata[] = [];
  for (let i = 0; i < chunks.length; i += 120) {
    const result = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': target.id }, body: chunks.slice(i, i + 120) });
    expect(result.response.status, JSON.stringify(result.error)).toBe(200);
    created.push(...(result.data!.chunk_metadata as T.ChunkMetadata[]));
  }
  return created;
}

function request(query: string, more: Partial<RetrievalRequest> = {}): RetrievalRequest {
  return { dataset, query, limit: 10, offset: 0, countTotal: true, ...more };
}

const search = (type: SearchType, query: string, more: Partial<RetrievalRequest> = {}) => retrieve(service.services, type, request(query, more));
const tracked = async (type: SearchType, query: string, more: Partial<RetrievalRequest> = {}) =>
  (await search(type, query, more)).hits.map((h) => trackingOf(h.id));
const tagFilter = (...tags: string[]): T.ChunkFilter => ({ must: [{ field: 'tag_set', match_any: tags }] });
const withTag = (tag: string) => FIXTURE.filter(([, , tags]) => tags.includes(tag)).map(([t]) => t);

async function expectStatus(promise: Promise<unknown>, status: number, message?: RegExp): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  expect((error as HttpError).status).toBe(status);
  if (message) expect((error as HttpError).message).toMatch(message);
}

beforeAll(async () => {
  service = await startTestService(ALLOW_LOCAL_STAND_INS);
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Retrieval' } })).data!.id;
  dataset = await service.newDataset(orgId, 'retrieval fixture');
  const created = await addChunks(
    dataset,
    FIXTURE.map(([tracking_id, text, tag_set], i) => ({ tracking_id, chunk_html: `<p>${text}</p>`, tag_set, num_value: i + 1 })),
  );
  for (const chunk of created) ids.set(chunk.tracking_id!, chunk.id);
  // The writes started holding the vectors in memory: settled before the tests, every search takes
  // the same path (pgvector's scores differ from the held vectors' in the last bits).
  await service.services.vectors.ready(dataset.id);
});

afterAll(async () => {
  await service?.stop();
});

describe.each(['semantic', 'fulltext', 'hybrid'] as const)('%s', (type) => {
  it('puts the chunk a distinctive query describes first', async () => {
    expect((await tracked(type, 'espresso machine steams milk for cappuccino'))[0]).toBe('espresso');
    expect((await tracked(type, 'reset password'))[0]).toBe('password');
    expect((await tracked(type, 'telescope rings of Saturn'))[0]).toBe('telescope');
  });

  it('pages: disjoint pages in a stable order that make up the longer list', async () => {
    // A query many chunks match (full-text matches any of its words).
    const query = type !== 'fulltext' ? 'our account order delivery warranty' : 'warranty parcel account card';
    const all = (await search(type, query, { limit: 9 })).hits.map((h) => h.id);
    expect(all.length).toBe(9);
    const pages = [];
    for (const offset of [0, 3, 6]) pages.push((await search(type, query, { offset, limit: 3 })).hits.map((h) => h.id));
    expect(pages.flat()).toEqual(all);
    expect(new Set(pages.flat()).size).toBe(9);
    expect((await search(type, query, { limit: 9 })).hits.map((h) => h.id)).toEqual(all);
    const past = await search(type, query, { offset: 1000, limit: 3 });
    expect(past.hits).toEqual([]);
    expect(past.total).toBe((await search(type, query, { limit: 3 })).total);
  });

  it('scores from best to worst, and keeps only chunks that pass the filter', async () => {
    const { hits } = await search(type, type === 'fulltext' ? 'warranty' : 'warranty for a product', { limit: 30, filter: tagFilter('product') });
    expect(hits.length).toBeGreaterThan(0);
    const products = new Set(withTag('product'));
    for (const hit of hits) expect(products.has(trackingOf(hit.id)!)).toBe(true);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score);
    const numbers = await search(type, 'warranty', { limit: 30, filter: { must: [{ field: 'num_value', range: { gte: 6, lte: 7 } }] } });
    expect(numbers.hits.map((h) => trackingOf(h.id)).sort()).toEqual(['warranty-claim', 'warranty-laptop']);
    expect(numbers.total).toBe(2);
  });

  it('drops hits below the score threshold, and counts only those above it', async () => {
    const query = type !== 'fulltext' ? 'warranty claim for a laptop' : 'warranty refund parcel';
    const { hits } = await search(type, query, { limit: 30 });
    expect(hits.length).toBeGreaterThan(3);
    // Between two scores: semantic hits may be scored from the held vectors and counted in SQL, whose
    // float4 sums can differ from them in the last bits.
    const threshold = (hits[2].score + hits[3].score) / 2;
    const above = hits.filter((h) => h.score >= threshold).map((h) => h.id);
    const kept = await search(type, query, { limit: 30, scoreThreshold: threshold });
    expect(kept.hits.map((h) => h.id)).toEqual(above);
    expect(kept.total).toBe(above.length);
    const none = await search(type, query, { scoreThreshold: hits[0].score * 2 + 1 });
    expect(none).toEqual({ hits: [], total: 0 });
  });

  it('refuses an empty query, a negative limit or offset and a malformed filter with 400', async () => {
    await expectStatus(search(type, ''), 400, /query: must not be empty/);
    await expectStatus(search(type, '   '), 400, /query: must not be empty/);
    await expectStatus(search(type, 'refund', { limit: -1 }), 400, /limit/);
    await expectStatus(search(type, 'refund', { offset: -5 }), 400, /offset/);
    await expectStatus(search(type, 'refund', { filter: { must: [{ field: 'colour', match_any: ['red'] }] } }), 400, /filters\.must\[0\]/);
  });

  it('counts the matches only when the total is asked for, with the same hits either way', async () => {
    const statements: string[] = [];
    const listener = (query: { sql: string }) => statements.push(query.sql);
    db().on('query', listener);
    let uncounted;
    try {
      uncounted = await search(type, 'warranty', { countTotal: false });
    } finally {
      db().removeListener('query', listener);
    }
    expect(uncounted.total).toBeNull();
    // Hybrid's lists are longer than this small dataset, so its semantic list counts the chunks to know
    // the index gave them all; and BM25 counts the dataset for its idf. Full-text counts the dataset
    // (and on Postgres each query term's chunks) for its idf, in statements marked so.
    if (type !== 'hybrid') expect(statements.filter((sql) => /count\(/i.test(sql) && !sql.includes('/* idf */'))).toEqual([]);
    expect(uncounted.hits).toEqual((await search(type, 'warranty')).hits);
  });

  it('answers limit 0 with no hits and the total', async () => {
    const result = await search(type, 'warranty', { limit: 0 });
    expect(result.hits).toEqual([]);
    expect(result.total).toBeGreaterThan(0);
  });
});

describe('semantic', () => {
  it('counts every chunk that passes the filter as total', async () => {
    expect((await search('semantic', 'anything at all')).total).toBe(FIXTURE.length);
    expect((await search('semantic', 'money', { filter: tagFilter('billing') })).total).toBe(withTag('billing').length);
    expect(await countMatches(service.services, 'semantic', request('money', { filter: tagFilter('billing') }))).toBe(withTag('billing').length);
  });

  it('returns every chunk of a selective filter, however far from the query', async () => {
    const rare = await tracked('semantic', 'refund my purchase to my card', { filter: tagFilter('rare'), limit: 10 });
    expect(rare.sort()).toEqual(withTag('rare').sort());
  });

  it('scores 1 − cosine distance by default, and turns each metric into a higher-is-better score', async () => {
    const [best] = (await search('semantic', 'Gift cards never expire and can be redeemed online or in any store.')).hits;
    expect(best.id).toBe(idOf('giftcard'));
    expect(best.score).toBeCloseTo(1, 5);
    for (const metric of ['euclidean', 'manhattan', 'dot'] as const) {
      const other = await service.newDataset(orgId, `metric ${metric}`, { DISTANCE_METRIC: metric });
      const created = await addChunks(other, [
        { chunk_html: 'solar panels on the roof' },
        { chunk_html: 'a quiet walk in the forest' },
        { chunk_html: 'fixing a leaking tap' },
      ]);
      const { hits, total } = await retrieve(service.services, 'semantic', {
        dataset: other,
        query: 'solar panels on the roof',
        limit: 3,
        offset: 0,
        countTotal: true,
      });
      expect(total).toBe(3);
      expect(hits[0].id).toBe(created[0].id);
      // Identical unit vectors: distance 0, so 1 / (1 + 0) for euclidean and manhattan, the inner product 1 for dot.
      expect(hits[0].score).toBeCloseTo(1, 5);
      expect(hits[1].score).toBeLessThan(hits[0].score);
      if (metric !== 'dot') expect(hits[2].score).toBeGreaterThan(0);
    }
  });

  it('refuses with 400, naming the endpoint, when the embedding endpoint fails', async () => {
    const broken = await service.newDataset(orgId, 'unreachable embeddings', { EMBEDDING_BASE_URL: 'http://127.0.0.1:9/v1', EMBEDDING_MODEL_NAME: 'nowhere' });
    await expectStatus(retrieve(service.services, 'semantic', { dataset: broken, query: 'hello', limit: 5, offset: 0 }), 400, /embed.*127\.0\.0\.1:9/);
  });
});

describe('semantic on a larger dataset', () => {
  let large: DatasetRow;
  const rareIds: string[] = [];

  // pgvector's paths through its HNSW index, which datasets whose vectors are not held in memory
  // keep: manhattan's (the held vectors have tests of their own, held-vectors.test.ts).
  beforeAll(async () => {
    large = await service.newDataset(orgId, 'retrieval large', { DISTANCE_METRIC: 'manhattan' });
    const topics = ['invoice payment', 'parcel delivery', 'password reset', 'warranty repair', 'store opening hours', 'discount code'];
    const chunks: T.ChunkReqPayload[] = Array.from({ length: 1500 }, (_, i) => ({
      chunk_html: `Note ${i} about ${topics[i % topics.length]} for customer ${i % 97} in region ${i % 13}`,
      tag_set: ['common'],
      num_value: i,
    }));
    // Five chunks with a tag of their own, on a subject far from the query below.
    for (let i = 0; i < 5; i++) chunks.push({ chunk_html: `Migrating cranes rest on the lake shore, sighting ${i}`, tag_set: ['birds'] });
    const created = await addChunks(large, chunks);
    rareIds.push(...created.slice(1500).map((c) => c.id));
    await db().raw('analyze chunk_vectors');
    await db().raw('analyze chunks');
  }, 240_000);

  /** The semantic search for `birds` chunks, and the statements it ran. */
  async function searchBirds() {
    const statements: { sql: string; bindings: unknown[] }[] = [];
    const listener = (query: { sql: string; bindings?: unknown[] }) => statements.push({ sql: query.sql, bindings: query.bindings ?? [] });
    db().on('query', listener);
    try {
      const result = await retrieve(service.services, 'semantic', {
        dataset: large,
        query: 'invoice payment for customer 12',
        filter: { must: [{ field: 'tag_set', match_any: ['birds'] }] },
        limit: 10,
        offset: 0,
        countTotal: true,
      });
      return { result, statements };
    } finally {
      db().removeListener('query', listener);
    }
  }

  /** The chunks' exact order by distance to the query, nearest first. */
  async function exactOrder(request: RetrievalRequest, chunkIds: string[]): Promise<string[]> {
    const query = await semanticQuery(service.services, request);
    const { rows } = await db().raw<{ rows: { id: string }[] }>(
      `select chunk_id as id from chunk_vectors where chunk_id = any(?::uuid[]) order by (${query.distance}) + 0, chunk_id`,
      [chunkIds, query.vector],
    );
    return rows.map((r) => r.id);
  }

  it('answers a selective filter from the chunks passing it, every distance computed, without walking the index', async () => {
    const { result, statements } = await searchBirds();
    expect(result.total).toBe(5);
    const request: RetrievalRequest = { dataset: large, query: 'invoice payment for customer 12', limit: 10, offset: 0 };
    expect(result.hits.map((h) => h.id)).toEqual(await exactOrder(request, rareIds));
    expect(statements.some((s) => /order by "distance"/i.test(s.sql))).toBe(false);
    expect(statements.filter((s) => s.sql.includes('+ 0') && /with "few"/.test(s.sql))).toHaveLength(1);
  });

  it('reads at most one chunk more than the limit it is given, and leaves broader filters to the index', async () => {
    const request: RetrievalRequest = { dataset: large, query: 'cranes on the shore', filter: tagFilter('birds'), limit: 3, offset: 0 };
    const query = await semanticQuery(service.services, request);
    expect(await nearestAmong(service.services, query, request, 3, 4)).toBeNull();
    const hits = await nearestAmong(service.services, query, request, 3, 5);
    expect(hits?.map((h) => h.id)).toEqual((await exactOrder(request, rareIds)).slice(0, 3));
    expect(await nearestAmong(service.services, query, { ...request, filter: tagFilter('no such tag') }, 3, 0)).toEqual([]);
  });

  it('finds every chunk of a filter through the index thanks to its iterative scan, when the filter is not selective', async () => {
    const limits = { ...selective };
    Object.assign(selective, { least: 0, share: 0 });
    let searched: Awaited<ReturnType<typeof searchBirds>>;
    try {
      searched = await searchBirds();
    } finally {
      Object.assign(selective, limits);
    }
    const { result, statements } = searched;
    expect(result.hits.map((h) => h.id).sort()).toEqual([...rareIds].sort());
    expect(result.total).toBe(5);
    // One nearest-neighbour statement, and no exact fallback.
    const nearest = statements.filter((s) => /order by "distance"/i.test(s.sql));
    expect(nearest).toHaveLength(1);
    expect(statements.some((s) => s.sql.includes('+ 0'))).toBe(false);

    // On 1500 rows the planner may sort them all instead (exact, and cheap): make it walk the
    // HNSW index, as it does on large datasets, and compare the scan with and without iteration.
    const run = (iterative: boolean) =>
      db().transaction(async (trx) => {
        await useIterativeScan(trx, 10);
        if (!iterative) await trx.raw(`select set_config('hnsw.iterative_scan', 'off', true)`);
        await trx.raw(`select set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)`);
        const sql = nearest[0].sql.replace(/\$\d+/g, '?');
        const { rows: plan } = await trx.raw(`explain ${sql}`, nearest[0].bindings as never);
        const { rows } = await trx.raw(sql, nearest[0].bindings as never);
        return { plan: plan.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'), ids: rows.map((r: { id: string }) => r.id) };
      });
    const iterative = await run(true);
    expect(iterative.plan).toContain(vectorIndexName(large.id));
    expect(iterative.ids.sort()).toEqual([...rareIds].sort());
    const single = await run(false);
    expect(single.plan).toContain(vectorIndexName(large.id));
    expect(single.ids.length).toBeLessThan(5);
  });

  it('ranks keyword hits it is given by their exact distance, next to the index candidates', async () => {
    const request: RetrievalRequest = { dataset: large, query: 'parcel delivery for customer 5', limit: 10, offset: 0 };
    const query = await semanticQuery(service.services, request);
    // Every chunk as a keyword hit: the answer is the exact one, whatever the index walk found.
    const { rows } = await db().raw<{ rows: { id: string }[] }>('select id from chunks where dataset_id = ?', [large.id]);
    const everyChunk = nearest(service.services, query, request, 10, Promise.resolve(rows.map((r) => ({ id: r.id, score: 0 }))));
    const { rows: exact } = await db().raw<{ rows: { id: string }[] }>(
      `select chunk_vectors.chunk_id as id from chunk_vectors where chunk_vectors.dataset_id = ?
        order by (${query.distance}) + 0, chunk_vectors.chunk_id limit 10`,
      [large.id, query.vector],
    );
    expect((await everyChunk).map((h) => h.id)).toEqual(exact.map((r) => r.id));
    // Keyword hits the index cannot give (here, a filter no chunk passes keeps it from giving any;
    // not taken as selective, so the index is walked): they come back nearest first, at the scores
    // of their own vectors.
    const none = { ...request, filter: tagFilter('no such tag') };
    const limits = { ...selective };
    Object.assign(selective, { least: 0, share: 0 });
    let fromKeywords: Awaited<ReturnType<typeof nearest>>;
    try {
      expect(await nearest(service.services, query, none, 3)).toEqual([]);
      fromKeywords = await nearest(service.services, query, none, 3, Promise.resolve(rareIds.map((id) => ({ id, score: 0 }))));
    } finally {
      Object.assign(selective, limits);
    }
    const { rows: rare } = await db().raw<{ rows: { id: string; score: number }[] }>(
      `select chunk_id as id, ${query.score} as score from chunk_vectors where chunk_id = any(?::uuid[]) order by 2 desc, 1 limit 3`,
      [query.vector, rareIds],
    );
    expect(fromKeywords.map((h) => h.id)).toEqual(rare.map((r) => r.id));
    expect(fromKeywords.map((h) => h.score)).toEqual(rare.map((r) => r.score));
  });

  it('pages beyond the first thousand hits (past ef_search)', async () => {
    const query = 'parcel delivery for customer 5';
    const first = await retrieve(service.services, 'semantic', { dataset: large, query, limit: 1200, offset: 0, countTotal: true });
    expect(first.hits).toHaveLength(1200);
    expect(new Set(first.hits.map((h) => h.id)).size).toBe(1200);
    expect(first.total).toBe(1505);
    const page = await retrieve(service.services, 'semantic', { dataset: large, query, limit: 10, offset: 1100, countTotal: true });
    expect(page.hits).toHaveLength(10);
  });
});

describe('fulltext', () => {
  it('counts every match as total, filtered', async () => {
    expect((await search('fulltext', 'warranty')).total).toBe(3);
    expect((await search('fulltext', 'warranty', { filter: tagFilter('product') })).total).toBe(2);
    expect(await countMatches(service.services, 'fulltext', request('warranty', { filter: tagFilter('support') }))).toBe(1);
    expect((await search('fulltext', 'zeppelin')).total).toBe(0);
    // Only stop words: nothing to rank by.
    expect(await search('fulltext', 'the of and')).toEqual({ hits: [], total: 0 });
  });

  it('matches the last word as a prefix with prefix', async () => {
    expect(await tracked('fulltext', 'refun', { prefix: true })).toEqual(['refund']);
    // Any word matches a plain query; the chunk holding both ranks first.
    expect((await tracked('fulltext', 'gift car', { prefix: true }))[0]).toBe('giftcard');
    // Without prefix, a word matches as a whole word, or (Typesense) as a near spelling.
    expect(await tracked('fulltext', 'refun')).toEqual(mode === 'embedded' ? [] : ['refund']);
    // A negated word stays a whole word.
    expect(await tracked('fulltext', 'warranty -laptop', { prefix: true })).not.toContain('warranty-laptop');
  });

  it('understands quoted phrases and negation', async () => {
    const phrase = await tracked('fulltext', '"two year warranty"');
    expect(phrase).toEqual(['warranty-tv']);
    const negated = await tracked('fulltext', 'warranty -television');
    expect(negated.sort()).toEqual(['warranty-claim', 'warranty-laptop']);
  });
});

describe('hybrid', () => {
  it('fuses the semantic and BM25 lists by reciprocal rank (k = 60)', async () => {
    const query = 'laptop warranty batteries';
    const semantic = (await search('semantic', query, { limit: 100 })).hits;
    const fulltext = (await search('bm25', query, { limit: 100 })).hits;
    const hybrid = await search('hybrid', query, { limit: 100 });
    expect(hybrid.hits).toEqual(
      reciprocalRankFusion([
        { hits: semantic, weight: 1 },
        { hits: fulltext, weight: 1 },
      ]).slice(0, 100),
    );
    expect(hybrid.total).toBe(new Set([...semantic, ...fulltext].map((h) => h.id)).size);
    // First in both lists: first, with the highest score there is.
    expect(semantic[0].id).toBe(idOf('warranty-laptop'));
    expect(fulltext[0].id).toBe(idOf('warranty-laptop'));
    expect(hybrid.hits[0].id).toBe(idOf('warranty-laptop'));
    expect(hybrid.hits[0].score).toBeCloseTo(2 / 61, 12);
    const page = await search('hybrid', query, { offset: 2, limit: 3 });
    expect(page.hits).toEqual(hybrid.hits.slice(2, 5));
  });

  it('ranks a chunk second in both lists above chunks first in only one', () => {
    const [a, b, c] = ['a', 'b', 'c'];
    const fused = reciprocalRankFusion([
      {
        hits: [
          { id: a, score: 9 },
          { id: b, score: 8 },
          { id: 'x', score: 1 },
        ],
        weight: 1,
      },
      {
        hits: [
          { id: c, score: 9 },
          { id: 'y', score: 5 },
          { id: b, score: 2 },
        ],
        weight: 1,
      },
    ]);
    // b: 1/62 + 1/63 beats a and c: 1/61 alone.
    expect(fused[0].id).toBe(b);
    expect(fused.slice(1, 3).map((h) => h.id)).toEqual([a, c]);
  });

  it('matches the last word as a prefix in its fulltext list', async () => {
    expect((await tracked('hybrid', 'refun', { prefix: true }))[0]).toBe('refund');
  });
});

describe('bm25', () => {
  it('puts the chunk that holds the rare query terms first, matching any term', async () => {
    expect((await tracked('bm25', 'refund'))[0]).toBe('refund');
    // A long query whose words are not all in any chunk still finds its best match.
    expect((await tracked('bm25', 'how long does my refund take to reach the original card please'))[0]).toBe('refund');
  });

  it('scores with the dataset parameters and an idf over the whole dataset, so filters do not change scores', async () => {
    const all = await search('bm25', 'refund card', { limit: 30 });
    const tag = FIXTURE.find(([t]) => t === 'refund')![2][0];
    const filtered = await search('bm25', 'refund card', { limit: 30, filter: tagFilter(tag) });
    const score = (hits: { id: string; score: number }[]) => hits.find((h) => trackingOf(h.id) === 'refund')!.score;
    expect(score(filtered.hits)).toBeCloseTo(score(all.hits), 10);
    expect(filtered.total).toBeLessThanOrEqual(all.total!);
    expect(await countMatches(service.services, 'bm25', request('refund card'))).toBe(all.total);
    const flat = await service.newDataset(orgId, 'bm25 k zero', { BM25_K: 0 });
    await addChunks(flat, [{ chunk_html: 'tea tea tea tea tea' }, { chunk_html: 'tea and a biscuit' }]);
    // With k = 0 term frequency stops counting: both chunks score the same.
    const [first, second] = (await retrieve(service.services, 'bm25', { dataset: flat, query: 'tea', limit: 2, offset: 0 })).hits;
    expect(first.score).toBeCloseTo(second.score, 10);
  });

  it('pages past the end with the right total, and applies the threshold', async () => {
    const all = await search('bm25', 'refund card parcel', { limit: 30 });
    const past = await search('bm25', 'refund card parcel', { offset: 500 });
    expect(past).toEqual({ hits: [], total: all.total });
    const top = all.hits[0].score;
    expect((await search('bm25', 'refund card parcel', { scoreThreshold: top })).hits.map((h) => h.id)).toEqual([all.hits[0].id]);
  });
});

describe('disabled types', () => {
  it('refuses a search type the dataset disables', async () => {
    const noFulltext = await service.newDataset(orgId, 'no fulltext', { FULLTEXT_ENABLED: false });
    await expectStatus(retrieve(service.services, 'fulltext', { dataset: noFulltext, query: 'x', limit: 1, offset: 0 }), 400, /FULLTEXT_ENABLED/);
    const noKeywords = await service.newDataset(orgId, 'no keywords', { FULLTEXT_ENABLED: false, BM25_ENABLED: false });
    await expectStatus(retrieve(service.services, 'hybrid', { dataset: noKeywords, query: 'x', limit: 1, offset: 0 }), 400, /BM25_ENABLED/);
    await expect(retrieve(service.services, 'semantic', { dataset: noFulltext, query: 'x', limit: 1, offset: 0, countTotal: true })).resolves.toEqual({
      hits: [],
      total: 0,
    });
  });
});
