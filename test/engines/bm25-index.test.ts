// BM25 over the postings index (search/retrieval/bm25, migration 014) against an exhaustive BM25
// computed here from every chunk's stored terms: the same top k, in the same order, with the same
// scores, for many queries, page sizes, filters and thresholds; and the index kept exact by the
// triggers through inserts, updates and deletes. The corpus is written straight into `chunks` (its
// terms by PostgreSQL's analyzer, as the write path stores them): large enough, quickly, to make
// the index read few postings, score selective filters directly and read deeper for broad ones.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOrganization, searchChunks } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { termColumns } from '../../server/domain/chunks/write.js';
import { selective } from '../../server/search/filters/passing.js';
import { retrieve } from '../../server/search/retrieval/index.js';
import { SPLIT, walkHelper } from '../../server/search/retrieval/bm25/walkHelpers.js';
import { idf } from '../../server/search/retrieval/termWeights.js';
import { englishTerms } from '../../server/text/englishTerms.js';
import type { Hit, RetrievalRequest } from '../../server/search/types.js';
import { startTestService, type TestService } from '../support/service.js';
import { prng } from '../support/prng.js';

let service: TestService;

/** The query's terms as PostgreSQL's analyzer makes the chunks' terms (stemmed, stop words dropped), distinct. */
async function queryTerms(query: string): Promise<string[]> {
  const { rows } = await db().raw<{ rows: { lexeme: string }[] }>(`select distinct lexeme from unnest(to_tsvector('english', ?))`, [query]);
  return rows.map((r) => r.lexeme);
}
let orgId: string;
const db = () => service.services.store.db;

const WORDS = [
  'glacier',
  'river',
  'canyon',
  'forest',
  'meadow',
  'harbour',
  'lantern',
  'compass',
  'orchard',
  'falcon',
  'summit',
  'valley',
  'granite',
  'copper',
  'amber',
  'willow',
  'thunder',
  'ember',
  'crystal',
  'marble',
  'cedar',
  'prairie',
  'tundra',
  'lagoon',
  'beacon',
  'quarry',
  'saddle',
  'anchor',
  'voyage',
  'ledger',
  'parcel',
  'refund',
  'warranty',
  'invoice',
  'battery',
  'kettle',
  'blanket',
  'helmet',
  'ladder',
  'pillow',
  'rocket',
  'tablet',
  'violin',
  'walnut',
  'yogurt',
  'zephyr',
  'bramble',
  'cobalt',
];
const FUNCTION_WORDS = ['the', 'of', 'and', 'a', 'to', 'in', 'is', 'with'];

/** Zipf-like: early words far more often than late ones, so some terms are in most chunks. */
function word(random: () => number): string {
  return random() < 0.25 ? FUNCTION_WORDS[Math.floor(random() * FUNCTION_WORDS.length)] : WORDS[Math.floor(WORDS.length * random() ** 2.2)];
}

function text(random: () => number): string {
  const length = 2 + Math.floor(random() ** 1.5 * 70);
  const words: string[] = [];
  for (let i = 0; i < length; i++) words.push(random() < 0.15 && words.length ? words[words.length - 1] : word(random));
  return words.join(' ');
}

/** Chunks with the given texts and tags, their terms written as the write path does (a second statement). */
async function insertChunks(dataset: DatasetRow, chunks: { text: string; tags: string[] }[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < chunks.length; i += 500) {
    const batch = chunks.slice(i, i + 500);
    // With their terms, as the write path stores a chunk (setTerms below changes them as an update).
    const rows: { id: string }[] = await db()('chunks')
      .insert(batch.map((c) => ({ dataset_id: dataset.id, chunk_html: c.text, tag_set: c.tags, ...termColumns(db(), c.text) })))
      .returning('id');
    ids.push(...rows.map((r) => r.id));
  }
  return ids;
}

async function setTerms(ids: string[], texts: string[]): Promise<void> {
  await db().raw(
    `update chunks set chunk_html = t.text, bm25_terms = to_tsvector('english', t.text),
       bm25_length = (select coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) from unnest(to_tsvector('english', t.text)) u)
     from unnest(?::uuid[], ?::text[]) as t(id, text) where chunks.id = t.id`,
    [ids, texts],
  );
}

interface Stored {
  id: string;
  length: number;
  tags: string[];
  tf: Map<string, number>;
}

async function storedChunks(dataset: DatasetRow): Promise<Stored[]> {
  const { rows } = await db().raw<{ rows: { id: string; len: number; tags: string[] | null; lexeme: string | null; tf: number | null }[] }>(
    `select c.id, c.bm25_length as len, c.tag_set as tags, u.lexeme, coalesce(array_length(u.positions, 1), 1) as tf
       from chunks c left join lateral unnest(c.bm25_terms) u on true
      where c.dataset_id = ? and c.bm25_terms is not null`,
    [dataset.id],
  );
  const byId = new Map<string, Stored>();
  for (const r of rows) {
    let chunk = byId.get(r.id);
    if (!chunk) byId.set(r.id, (chunk = { id: r.id, length: r.len, tags: r.tags ?? [], tf: new Map() }));
    if (r.lexeme) chunk.tf.set(r.lexeme, r.tf!);
  }
  return [...byId.values()];
}

/** BM25 of every chunk holding a query term, computed here from scratch: the reference. */
function exhaustive(chunks: Stored[], terms: string[], k1: number, b: number, average: number | null, keep: (c: Stored) => boolean): Hit[] {
  const avg = average ?? chunks.reduce((sum, c) => sum + c.length, 0) / chunks.length;
  const df = terms.map((t) => chunks.filter((c) => c.tf.has(t)).length);
  return chunks
    .filter((c) => keep(c) && terms.some((t) => c.tf.has(t)))
    .map((c) => ({
      id: c.id,
      score: terms.reduce((sum, t, i) => {
        const tf = c.tf.get(t) ?? 0;
        return tf ? sum + (idf(chunks.length, df[i]) * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * c.length) / avg)) : sum;
      }, 0),
    }))
    .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1));
}

/**
 * The same hits: scores equal but for rounding, and ids in order wherever the score is not tied (within
 * rounding) with another of `ranking`, the whole exhaustive ranking the expected hits were cut from.
 */
function expectSameHits(actual: Hit[], expected: Hit[], context: string, ranking: Hit[] = expected): void {
  expect(actual.length, context).toBe(expected.length);
  const tied = (score: number) => ranking.filter((h) => Math.abs(h.score - score) <= 1e-9).length > 1;
  actual.forEach((hit, i) => {
    expect(hit.score, `${context} #${i}`).toBeCloseTo(expected[i].score, 9);
    if (!tied(expected[i].score)) expect(hit.id, `${context} #${i}`).toBe(expected[i].id);
  });
}

const tagged = (tag: string): T.ChunkFilter => ({ must: [{ field: 'tag_set', match_any: [tag] }] });

let dataset: DatasetRow;
let chunks: Stored[];
const QUERIES: string[] = [];

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'BM25 index' } })).data!.id;
  dataset = await service.newDataset(orgId, 'bm25 index');
  const random = prng(7);
  const corpus = Array.from({ length: 6000 }, (_, i) => ({
    text: text(random),
    // few: 1 %, scored directly; most: 90 %, read deeper past the filter.
    tags: [i % 100 === 0 ? 'few' : 'none', random() < 0.9 ? 'most' : 'other'],
  }));
  await insertChunks(dataset, corpus);
  chunks = await storedChunks(dataset);
  for (let i = 0; i < 40; i++) QUERIES.push(Array.from({ length: 1 + Math.floor(random() * 4) }, () => word(random)).join(' '));
  QUERIES.push('glacier', 'the of and', 'cobalt zephyr', 'glaciers rivers and canyons');
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

async function bm25(request: Partial<RetrievalRequest> & { query: string }, target = dataset): Promise<Hit[]> {
  return (await retrieve(service.services, 'bm25', { dataset: target, limit: 10, offset: 0, ...request })).hits;
}

// Each search path in turn: SQL over the postings index, then the index held in memory, then with
// every walk split with the helper thread (walkHelpers.ts; at this size no walk is long enough).
describe.each(['sql', 'memory', 'memory, walks split'] as const)('BM25 in %s', (path) => {
  const postings = SPLIT.postings;
  beforeAll(async () => {
    service.services.bm25.enabled = path !== 'sql';
    if (path !== 'sql') expect(await service.services.bm25.ready(dataset.id)).not.toBeNull();
    if (path === 'memory, walks split') {
      SPLIT.postings = 0;
      expect(await walkHelper()).not.toBeNull();
    }
  });
  afterAll(() => {
    SPLIT.postings = postings;
  });

  it.runIf(path === 'memory, walks split')('splits the walks of a search alone, not of one beside another', async () => {
    const helper = (await walkHelper())!;
    const query = 'glacier river kettle';
    const alone = helper.answered;
    await bm25({ query });
    const split = helper.answered - alone;
    expect(split).toBeGreaterThan(0);
    // The first starts alone and splits as before; the second starts beside it and walks whole.
    const together = helper.answered;
    await Promise.all([bm25({ query }), bm25({ query: 'canyon forest meadow' })]);
    expect(helper.answered - together).toBe(split);
  });

  it('returns the exhaustive top k, in order, for every query and page size', async () => {
    for (const query of QUERIES) {
      const terms = await queryTerms(query);
      const expected = exhaustive(chunks, terms, 1.2, 0.75, null, () => true);
      for (const limit of [1, 10, 100]) expectSameHits(await bm25({ query, limit }), expected.slice(0, limit), `${query} top ${limit}`, expected);
      expectSameHits(await bm25({ query, limit: 5, offset: 20 }), expected.slice(20, 25), `${query} page 5`, expected);
    }
  });

  it('is exact with a selective and with a broad filter, and with a threshold', async () => {
    const limits = { ...selective };
    for (const query of QUERIES.slice(0, 20)) {
      const terms = await queryTerms(query);
      for (const tag of ['few', 'most']) {
        const expected = exhaustive(chunks, terms, 1.2, 0.75, null, (c) => c.tags.includes(tag));
        expectSameHits(await bm25({ query, limit: 10, filter: tagged(tag) }), expected.slice(0, 10), `${query} [${tag}]`, expected);
        // The selective filter through the postings too, read deeper until enough chunks pass.
        Object.assign(selective, { least: 0, share: 0 });
        try {
          expectSameHits(await bm25({ query, limit: 10, filter: tagged(tag) }), expected.slice(0, 10), `${query} [${tag}], postings`, expected);
        } finally {
          Object.assign(selective, limits);
        }
      }
      const all = exhaustive(chunks, terms, 1.2, 0.75, null, () => true);
      if (all.length < 30) continue;
      const threshold = all[25].score;
      const above = all.filter((h) => h.score >= threshold);
      expectSameHits(await bm25({ query, limit: 100, scoreThreshold: threshold }), above, `${query} ≥ ${threshold}`);
      const counted = await retrieve(service.services, 'bm25', { dataset, query, limit: 1, offset: 0, scoreThreshold: threshold, countTotal: true });
      expect(counted.total).toBe(above.length);
    }
  });

  it("counts every chunk holding a query term, and uses the dataset's parameters when it sets them", async () => {
    const query = 'glacier river kettle';
    const terms = await queryTerms(query);
    const counted = await retrieve(service.services, 'bm25', { dataset, query, limit: 1, offset: 0, countTotal: true });
    expect(counted.total).toBe(exhaustive(chunks, terms, 1.2, 0.75, null, () => true).length);
    const tuned = await service.newDataset(orgId, 'bm25 tuned', { BM25_K: 2, BM25_B: 0.3, BM25_AVG_LEN: 12 });
    const random = prng(11);
    await insertChunks(
      tuned,
      Array.from({ length: 800 }, () => ({ text: text(random), tags: [] })),
    );
    const tunedChunks = await storedChunks(tuned);
    const ranking = exhaustive(tunedChunks, terms, 2, 0.3, 12, () => true);
    expectSameHits(await bm25({ query, limit: 20 }, tuned), ranking.slice(0, 20), 'tuned', ranking);
  });
});

describe('BM25 index upkeep', () => {
  it('keeps postings, term counts and totals exact through updates and deletes', async () => {
    const target = await service.newDataset(orgId, 'bm25 changes');
    const random = prng(3);
    const ids = await insertChunks(
      target,
      Array.from({ length: 600 }, () => ({ text: text(random), tags: [] })),
    );
    await setTerms(
      ids.slice(0, 150),
      ids.slice(0, 150).map(() => text(random)),
    );
    await db()('chunks')
      .whereIn('id', ids.slice(100, 250))
      .update({ metadata: JSON.stringify({ touched: true }) });
    await db()('chunks').whereIn('id', ids.slice(200, 400)).delete();
    const differences = await db().raw<{ rows: { n: number }[] }>(
      `with expected as (
         select c.dataset_id, u.lexeme as term, coalesce(array_length(u.positions, 1), 1) as tf, c.bm25_length as len, c.id as chunk_id
           from chunks c, unnest(c.bm25_terms) u where c.dataset_id = ?),
       actual as (select dataset_id, term, tf::int, len, chunk_id from bm25_postings where dataset_id = ?)
       select ((select count(*) from (select * from expected except all select * from actual) x)
             + (select count(*) from (select * from actual except all select * from expected) y))::int as n`,
      [target.id, target.id],
    );
    expect(differences.rows[0].n).toBe(0);
    const counts = await db().raw<{ rows: { n: number }[] }>(
      `select count(*)::int as n from (
         (select term, count(*)::int from bm25_postings where dataset_id = ? group by term
          except select term, chunks from bm25_term_counts where dataset_id = ?)
         union all
         (select term, chunks from bm25_term_counts where dataset_id = ?
          except select term, count(*)::int from bm25_postings where dataset_id = ? group by term)) d`,
      [target.id, target.id, target.id, target.id],
    );
    expect(counts.rows[0].n).toBe(0);
    const totals = await db()('bm25_dataset_totals').where({ dataset_id: target.id }).first();
    const actual = await db()('chunks').where({ dataset_id: target.id }).whereNotNull('bm25_terms').count('* as n').sum('bm25_length as s').first();
    expect([Number(totals.chunks), Number(totals.length_sum)]).toEqual([Number(actual!.n), Number(actual!.s)]);
    // Each length is its terms counted as often as they occur (a trigger derives it from the terms).
    const lengths = await db().raw<{ rows: { wrong: number }[] }>(
      `select count(*)::int as wrong from chunks c where c.dataset_id = ?
          and c.bm25_length is distinct from (select coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) from unnest(c.bm25_terms) u)`,
      [target.id],
    );
    expect(lengths.rows[0].wrong).toBe(0);
    await db()('chunks').where({ dataset_id: target.id }).delete();
    expect(await db()('bm25_postings').where({ dataset_id: target.id }).first()).toBeUndefined();
    expect(await db()('bm25_term_counts').where({ dataset_id: target.id }).first()).toBeUndefined();
    // The totals stay, at 0, so the dataset's version never goes back.
    const emptied = await db()('bm25_dataset_totals').where({ dataset_id: target.id }).first();
    expect([Number(emptied.chunks), Number(emptied.length_sum)]).toEqual([0, 0]);
  });

  it('keeps the in-memory index current through inserts, updates and deletes, and rebuilds it when changes are lost', async () => {
    service.services.bm25.enabled = true;
    const target = await service.newDataset(orgId, 'bm25 memory changes');
    const random = prng(5);
    const ids = await insertChunks(
      target,
      Array.from({ length: 400 }, () => ({ text: text(random), tags: [] })),
    );
    expect(await service.services.bm25.ready(target.id)).not.toBeNull();
    const expectCurrent = async (context: string) => {
      const stored = await storedChunks(target);
      for (const query of QUERIES.slice(0, 10)) {
        const terms = await queryTerms(query);
        // Every search must see the writes committed before it: the index, not SQL, answers here.
        expect(await service.services.bm25.current(target.id), context).not.toBeNull();
        const ranking = exhaustive(stored, terms, 1.2, 0.75, null, () => true);
        expectSameHits(await bm25({ query, limit: 10 }, target), ranking.slice(0, 10), `${context}: ${query}`, ranking);
      }
    };
    await insertChunks(
      target,
      Array.from({ length: 50 }, () => ({ text: text(random), tags: [] })),
    );
    await expectCurrent('after inserts');
    await setTerms(
      ids.slice(0, 60),
      ids.slice(0, 60).map(() => text(random)),
    );
    await db()('chunks').whereIn('id', ids.slice(60, 120)).delete();
    await expectCurrent('after updates and deletes');
    // The change log no longer reaches back to the index's version: it is built again, SQL answering meanwhile.
    await setTerms([ids[200]], [text(random)]);
    await db()('bm25_changes').where({ dataset_id: target.id }).delete();
    expect(await service.services.bm25.current(target.id)).toBeNull();
    expect(await service.services.bm25.ready(target.id)).not.toBeNull();
    await expectCurrent('after a rebuild');
  });

  it("keeps the last 1,000 versions of a dataset's change log, each version's chunks whole", async () => {
    const target = await service.newDataset(orgId, 'bm25 change log window');
    const [id] = await insertChunks(target, [{ text: 'glacier river', tags: [] }]);
    const versions = async () =>
      (await db()('bm25_changes')
        .where({ dataset_id: target.id })
        .select(db().raw('min(version)::int as low, max(version)::int as high, count(*)::int as n'))
        .first()) as { low: number; high: number; n: number };
    const before = await versions();
    // Each call takes the next version and logs the chunk under it (as a tag edit's trigger does).
    await db().raw('select log_chunk_changes(array[?::uuid], array[?::uuid]) from generate_series(1, 1200)', [id, target.id]);
    const after = await versions();
    expect(after.high).toBe(before.high + 1200);
    expect([after.low, after.n]).toEqual([after.high - 999, 1000]);
    const totals = await db()('bm25_dataset_totals').where({ dataset_id: target.id }).first();
    expect([Number(totals.version), Number(totals.chunks)]).toEqual([after.high, 1]);
  });

  it('takes two writers that change terms in several statements each, in opposite orders, one after the other', async () => {
    const target = await service.newDataset(orgId, 'bm25 lock order');
    const [a, b] = await insertChunks(target, [
      { text: 'glacier', tags: [] },
      { text: 'river', tags: [] },
    ]);
    // Each inserts a chunk of one word, then gives an existing chunk the other writer's word: were
    // terms' counts locked before the dataset's totals, each would hold a count the other waits for.
    const writer = (inserted: string, updated: string, id: string) =>
      db().transaction(async (trx) => {
        await trx('chunks').insert({ dataset_id: target.id, chunk_html: inserted, ...termColumns(trx, inserted) });
        await new Promise((resolve) => setTimeout(resolve, 100));
        await trx('chunks')
          .where({ id })
          .update({ chunk_html: updated, ...termColumns(trx, updated) });
      });
    await Promise.all([writer('canyon', 'forest', a), writer('forest', 'canyon', b)]);
    const counts = await db()('bm25_term_counts').where({ dataset_id: target.id }).orderBy('term').select('term', 'chunks');
    expect(counts).toEqual([
      { term: 'canyon', chunks: 2 },
      { term: 'forest', chunks: 2 },
    ]);
    const words = await db()('dataset_words').where({ dataset_id: target.id }).orderBy('word').select('word', 'chunks');
    expect(words).toEqual([
      { word: 'canyon', chunks: 2 },
      { word: 'forest', chunks: 2 },
    ]);
  });

  it('guesses the terms PostgreSQL makes of a query of plain words, and makes no guess for others', async () => {
    const plain = [...QUERIES, 'Glaciers, Rivers and CANYONS!', 'what\'s (the) "running" of voyages?', 'being having doing ourselves generously'];
    for (const query of plain) expect(englishTerms(query), query).toEqual((await queryTerms(query)).sort());
    for (const query of ['e-mail', '3.5 volts', 'naïve', 'example.com']) expect(englishTerms(query), query).toBeNull();
  });

  it('answers on a settled index, checked by the statement reading the rows or the statistics, kept only while they agree', async () => {
    service.services.bm25.enabled = true;
    const target = await service.newDataset(orgId, 'bm25 settled');
    const random = prng(17);
    const ids = await insertChunks(
      target,
      Array.from({ length: 400 }, () => ({ text: text(random), tags: [] })),
    );
    expect(await service.services.bm25.ready(target.id)).not.toBeNull();
    // Replaced and deleted chunks leave dead postings, which the index's counts must skip.
    await setTerms(
      ids.slice(0, 20),
      ids.slice(0, 20).map(() => text(random)),
    );
    await db()('chunks').whereIn('id', ids.slice(20, 40)).delete();
    expect(await service.services.bm25.current(target.id)).not.toBeNull();
    expect(await service.services.vectors.ready(target.id)).not.toBeNull();
    // A second with no change applied: the indexes are settled.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const checks = vi.spyOn(service.services.bm25, 'current');
    const expectExact = async (query: string) => {
      const ranking = exhaustive(await storedChunks(target), await queryTerms(query), 1.2, 0.75, null, () => true);
      expectSameHits(await bm25({ query, limit: 10 }, target), ranking.slice(0, 10), query, ranking);
    };
    // Through the API, the page's rows are read as soon as the early answer is there, in the
    // statement that checks it: on a settled index that is the search's only statement when the
    // answer is kept; when it is not, the search reads its statistics and the rows again. Hybrid
    // search does the same with its fused page, and reads no rows for its lists' hits.
    let statements = 0;
    let page: string[] = [];
    const rowReads = async (query: string, searchType: 'bm25' | 'hybrid' = 'bm25') => {
      const reads: string[][] = [];
      let seen = 0;
      const listener = (q: { sql: string; bindings?: unknown[] }) => {
        if (q.sql.includes('bm25_')) seen++;
        if (q.sql.includes('chunk_html')) reads.push((q.bindings?.find(Array.isArray) as string[] | undefined) ?? []);
      };
      db().on('query', listener);
      try {
        const { data } = await searchChunks({
          client: service.client(),
          headers: { 'SVC-Dataset': target.id, 'X-API-Version': 'V2' },
          body: { query, search_type: searchType, page_size: 3 },
        });
        statements = seen;
        const ranking = exhaustive(await storedChunks(target), await queryTerms(query), 1.2, 0.75, null, () => true);
        const chunks = (data as T.SearchResponseBody).chunks;
        page = chunks.map((c) => (c.chunk as T.ChunkMetadata).id);
        if (searchType === 'bm25') expect(chunks.map((c) => (c.chunk as T.ChunkMetadata).id)).toEqual(ranking.slice(0, 3).map((h) => h.id));
        else for (const read of reads) expect(read).toHaveLength(3);
        return reads.length;
      } finally {
        db().off('query', listener);
      }
    };
    try {
      for (const query of QUERIES.slice(0, 10)) await expectExact(query);
      expect(await rowReads('glacier canyon')).toBe(1);
      expect(statements).toBe(1);
      expect(await rowReads('glacier canyon', 'hybrid')).toBe(1);
      expect(statements).toBe(1);
      // Answered on the settled index: none needed its check.
      expect(checks).not.toHaveBeenCalled();
      // A write behind the settled index: the statistics' version differs, the search is made again.
      await setTerms([ids[70]], ['zephyr zephyr zephyr cobalt']);
      await expectExact('zephyr cobalt');
      expect(checks).toHaveBeenCalled();
      expect((await bm25({ query: 'zephyr cobalt', limit: 1 }, target))[0].id).toBe(ids[70]);
      // Settled again, then another write behind it: the rows read early are not the page's.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await setTerms([ids[71]], ['zephyr zephyr zephyr zephyr cobalt cobalt']);
      expect(await rowReads('zephyr cobalt')).toBe(2);
      expect(statements).toBeGreaterThan(2);
      // The same for hybrid search: its page is the one made after the write. (Its search first
      // brings the held vectors to the version of the index, which the searches above caught up.)
      await rowReads('zephyr cobalt', 'hybrid');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await setTerms([ids[72]], ['zephyr zephyr zephyr zephyr zephyr cobalt cobalt cobalt']);
      // (Its rows read early may all be the page's: then they are the rows read after the write.)
      await rowReads('zephyr cobalt', 'hybrid');
      expect(statements).toBeGreaterThan(2);
      const after = await retrieve(service.services, 'hybrid', { dataset: target, query: 'zephyr cobalt', limit: 3, offset: 0 });
      expect(page).toEqual(after.hits.map((h) => h.id));
      expect(page).toContain(ids[72]);
    } finally {
      checks.mockRestore();
    }
  });

  it('answers tag filters from memory, current through edits of the tags alone', async () => {
    service.services.bm25.enabled = true;
    const target = await service.newDataset(orgId, 'bm25 memory tags');
    const random = prng(13);
    const ids = await insertChunks(
      target,
      Array.from({ length: 400 }, (_, i) => ({ text: text(random), tags: i % 4 === 0 ? ['red'] : i % 4 === 1 ? ['red', 'blue'] : [] })),
    );
    expect(await service.services.bm25.ready(target.id)).not.toBeNull();
    const filters: T.ChunkFilter[] = [
      tagged('red'),
      tagged('blue'),
      { must_not: [{ field: 'tag_set', match_any: ['red'] }] },
      {
        should: [
          { field: 'tag_set', match_all: ['red', 'blue'] },
          { field: 'tag_set', match_any: ['green'] },
        ],
      },
    ];
    const expectCurrent = async (context: string) => {
      const stored = await storedChunks(target);
      for (const filter of filters) {
        const keep = (c: Stored) => {
          const { must, should, must_not } = { must: [], should: [], must_not: [], ...filter } as Required<T.ChunkFilter>;
          const holds = (condition: T.ConditionType) => {
            const { match_any, match_all } = condition as T.FieldCondition;
            return (match_any ?? []).every((t) => c.tags.includes(String(t))) && (match_all ?? []).every((t) => c.tags.includes(String(t)));
          };
          return must!.every(holds) && (should!.length === 0 || should!.some(holds)) && !must_not!.some(holds);
        };
        for (const query of QUERIES.slice(0, 8)) {
          const terms = await queryTerms(query);
          const ranking = exhaustive(stored, terms, 1.2, 0.75, null, keep);
          // No statement reads the filter: the held tags answer it.
          const statements: string[] = [];
          const listener = (q: { sql: string }) => statements.push(q.sql);
          db().on('query', listener);
          try {
            const found = await retrieve(service.services, 'bm25', { dataset: target, query, limit: 10, offset: 0, filter, countTotal: true });
            expectSameHits(found.hits, ranking.slice(0, 10), `${context}: ${query} ${JSON.stringify(filter)}`, ranking);
            expect(found.total).toBe(ranking.length);
          } finally {
            db().off('query', listener);
          }
          expect(statements.filter((sql) => sql.includes('"tag_set"'))).toEqual([]);
        }
      }
    };
    await expectCurrent('as written');
    // Tags edited, terms untouched: only the tag change log (migration 022) tells the index.
    await db()('chunks')
      .whereIn('id', ids.slice(0, 100))
      .update({ tag_set: ['green'] });
    await db()('chunks').whereIn('id', ids.slice(100, 140)).update({ tag_set: null });
    await db()('chunks')
      .whereIn('id', ids.slice(140, 200))
      .update({ tag_set: ['red', 'blue'] });
    await expectCurrent('after tag edits');
  });
});
