// Semantic search from the vectors held in memory (search/retrieval/vectors, migration 019) against
// an exact nearest-neighbour search computed here: for each metric the graph serves, nearly every
// true neighbour found and every score the exact one; and the held vectors kept current by the
// change log through inserts, replaced vectors and deletes (cascading from chunks), in both modes;
// a long scan by column shared with a helper thread answers the same, and one kept to the worker
// takes a helper once hybrid's keyword list is handed over, whose chunks it ranks in its answer.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createChunk, createOrganization } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { packIds } from '../../server/search/chunkIdWords.js';
import { pageRows } from '../../server/search/pageRows.js';
import { selective } from '../../server/search/filters/passing.js';
import { datasetVersion } from '../../server/search/retrieval/changes.js';
import { retrieve } from '../../server/search/retrieval/index.js';
import type { Hit, RetrievalRequest } from '../../server/search/types.js';
import { deliver, handoff } from '../../server/search/retrieval/vectors/handoff.js';
import { CALIBRATION, type FoundBy, HeldVectors, type Nearest } from '../../server/search/retrieval/vectors/index.js';
import { nearest, scoreSql, semanticQuery } from '../../server/search/retrieval/semantic.js';
import { up as dropHeldVectorIndexes } from '../../server/store/migrations/020_held_vector_indexes.js';
import { type DistanceMetric, distanceOperators, ensureVectorIndex, vectorIndexName, vectorLiteral, writeVectors } from '../../server/store/vectors.js';
import { prng } from '../support/prng.js';
import { startTestService, type TestService } from '../support/service.js';

const DIMENSION = 24;
const CHUNKS = 3000;
const QUERIES = 40;
/** How long a test waits for a graph to grow and be calibrated (slices of growth share the worker's loop with searches). */
const GROWN = { timeout: 30_000 };

let service: TestService;
let orgId: string;
const db = () => service.services.store.db;

/** Vectors around 30 centres, so that neighbours are near and far. */
function vectors(count: number, random: () => number): number[][] {
  const centres = Array.from({ length: 30 }, () => Array.from({ length: DIMENSION }, () => random() * 2 - 1));
  return Array.from({ length: count }, () => {
    const centre = centres[Math.floor(random() * centres.length)];
    return centre.map((c) => c + (random() - 0.5) * 0.6);
  });
}

const distanceOf: Record<Exclude<DistanceMetric, 'manhattan'>, (a: number[], b: number[]) => number> = {
  cosine: (a, b) => {
    const dot = a.reduce((s, x, i) => s + x * b[i], 0);
    return 1 - dot / Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));
  },
  dot: (a, b) => -a.reduce((s, x, i) => s + x * b[i], 0),
  euclidean: (a, b) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0)),
};
const scoreOf = { cosine: (d: number) => 1 - d, dot: (d: number) => -d, euclidean: (d: number) => 1 / (1 + d) };

async function insertChunks(dataset: DatasetRow, list: number[][]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < list.length; i += 500) {
    const batch = list.slice(i, i + 500);
    const rows: { id: string }[] = await db()('chunks')
      .insert(
        batch.map((_, j) => ({
          dataset_id: dataset.id,
          chunk_html: `chunk ${i + j}`,
          // Its terms, as the write path stores them with every chunk: BM25's held postings answer tag filters.
          bm25_terms: db().raw("to_tsvector('english', ?)", [`chunk ${i + j}`]),
          bm25_length: 2,
          tag_set: [(i + j) % 100 === 0 ? 'few' : 'many', ...((i + j) % 10 === 3 ? ['tenth'] : [])],
        })),
      )
      .returning('id');
    await writeVectors(
      db(),
      dataset.id,
      rows.map((r, j) => ({ chunkId: r.id, vector: batch[j] })),
    );
    ids.push(...rows.map((r) => r.id));
  }
  return ids;
}

async function semantic(dataset: DatasetRow, vector: number[], limit = 10, filter?: T.ChunkFilter): Promise<Hit[]> {
  return (await retrieve(service.services, 'semantic', { dataset, query: 'q', vector, limit, offset: 0, filter })).hits;
}

/** The statements `run` sends that read the vectors table: none when the held vectors answer. */
async function vectorTableReads(run: () => Promise<unknown>): Promise<string[]> {
  const reads: string[] = [];
  const listener = (q: { sql: string }) => {
    if (q.sql.includes('chunk_vectors')) reads.push(q.sql);
  };
  db().on('query', listener);
  try {
    await run();
  } finally {
    db().off('query', listener);
  }
  return reads;
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Held vectors' } })).data!.id;
}, 60_000);

afterAll(async () => {
  await service?.stop();
});

describe.each(['cosine', 'dot', 'euclidean'] as const)('%s', (metric) => {
  let dataset: DatasetRow;
  let stored: number[][];
  let ids: string[];
  const random = prng(metric.length);
  const scanBytes = CALIBRATION.scanBytes;

  beforeAll(async () => {
    // The graph's searches, kept from a scan: until calibration has found the graph good, and
    // when it finds it short, searches scan these vectors' 24-dimension int8 codes, too coarse to
    // order a broad filter's candidates (0.9475 seen), and when calibration ends depends on
    // timing. The scan is tested under 'calibration' below.
    CALIBRATION.scanBytes = 0;
    dataset = await service.newDataset(orgId, `held ${metric}`, { DISTANCE_METRIC: metric, EMBEDDING_SIZE: DIMENSION });
    stored = vectors(CHUNKS, random);
    ids = await insertChunks(dataset, stored);
    expect(await service.services.vectors.ready(dataset.id)).not.toBeNull();
    // Tag filters are answered from BM25's held postings.
    expect(await service.services.bm25.ready(dataset.id)).not.toBeNull();
  }, 120_000);
  afterAll(() => {
    CALIBRATION.scanBytes = scanBytes;
  });

  it('finds the exact neighbours, with their exact scores', async () => {
    let found = 0;
    for (const query of vectors(QUERIES, random)) {
      const exact = stored
        .map((v, i) => ({ id: ids[i], distance: distanceOf[metric](query, v) }))
        .sort((a, b) => a.distance - b.distance)
        .slice(0, 10);
      let hits: Hit[] = [];
      expect(await vectorTableReads(async () => (hits = await semantic(dataset, query)))).toEqual([]);
      expect(hits).toHaveLength(10);
      const truth = new Set(exact.map((e) => e.id));
      found += hits.filter((h) => truth.has(h.id)).length;
      for (const hit of hits) {
        const distance = distanceOf[metric](query, stored[ids.indexOf(hit.id)]);
        expect(hit.score).toBeCloseTo(scoreOf[metric](distance), 5);
      }
      expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
    }
    // The recall the search promises (0.95 at 10, CALIBRATION's target): the graph is built by
    // several threads, so runs differ (0.9775 seen for the inner product in CI at b64f582).
    expect(found / (QUERIES * 10)).toBeGreaterThanOrEqual(0.95);
  });

  it("walks the graph while the keyword list is made, then ranks the list's chunks by exact distance", async () => {
    const [vector] = vectors(1, random);
    const request: RetrievalRequest = { dataset, query: 'q', vector, limit: 10, offset: 0 };
    const held = (await service.services.vectors.ready(dataset.id))!;
    const walks: number[] = [];
    const walk = held.nearest.bind(held);
    held.nearest = (query, k, also, ...rest) => {
      walks.push(also.length);
      return walk(query, k, also, ...rest);
    };
    try {
      let giveKeywords!: (hits: Hit[]) => void;
      const keywords = new Promise<Hit[]>((resolve) => {
        giveKeywords = resolve;
      });
      const answer = nearest(service.services, await semanticQuery(service.services, request), request, 10, keywords);
      await vi.waitFor(() => expect(walks).toEqual([0]));
      // Every chunk as a keyword hit: the answer is the exact one, whatever the walk found.
      giveKeywords(ids.map((id) => ({ id, score: 0 })));
      const exact = stored
        .map((v, i) => ({ id: ids[i], distance: distanceOf[metric](vector, v) }))
        .sort((a, b) => a.distance - b.distance)
        .slice(0, 10);
      expect((await answer).map((h) => h.id)).toEqual(exact.map((e) => e.id));
    } finally {
      held.nearest = walk;
    }
  });

  it('ranks the chunks of a keyword list handed over before its candidates were found with them, by exact distance', async () => {
    const [vector] = vectors(1, random);
    const held = (await service.services.vectors.ready(dataset.id))!;
    // The worker asked for no candidates: its answer is the handed-over chunks alone, ranked.
    const { worker, handle } = held as unknown as { worker: { nearest(...args: unknown[]): Promise<Nearest> }; handle: number };
    const named = ids.slice(0, 8);
    const words = handoff(named.length);
    expect(deliver(words, packIds(named))).toBe(true);
    const found = await worker.nearest(handle, Float32Array.from(vector), 3, 0, new Int32Array(0), false, words);
    const exact = named
      .map((id) => ({ id, distance: distanceOf[metric](vector, stored[ids.indexOf(id)]) }))
      .sort((a, b) => a.distance - b.distance)
      .slice(0, 3);
    expect(found.ids).toEqual(exact.map((e) => e.id));
    // Closed by that answer: a list delivered after it is refused.
    expect(deliver(words, packIds(named))).toBe(false);
  });

  it('ranks the chunks a selective filter passes exactly', async () => {
    const few = { must: [{ field: 'tag_set', match_any: ['few'] }] };
    for (const query of vectors(10, random)) {
      const exact = stored
        .map((v, i) => ({ id: ids[i], distance: distanceOf[metric](query, v) }))
        .filter((_, i) => i % 100 === 0)
        .sort((a, b) => a.distance - b.distance)
        .slice(0, 10);
      let hits: Hit[] = [];
      expect(await vectorTableReads(async () => (hits = await semantic(dataset, query, 10, few)))).toEqual([]);
      expect(hits.map((h) => h.id)).toEqual(exact.map((e) => e.id));
    }
  });

  it('ranks a long list of chunks a filter passes exactly (screened by their codes under cosine)', async () => {
    const many = { must: [{ field: 'tag_set', match_any: ['many'] }] };
    const limits = { ...selective };
    // Every filter selective: the 2,970 chunks of "many" are ranked from their list.
    Object.assign(selective, { least: CHUNKS, share: 1 });
    try {
      for (const query of vectors(10, random)) {
        const exact = stored
          .map((v, i) => ({ id: ids[i], distance: distanceOf[metric](query, v) }))
          .filter((_, i) => i % 100 !== 0)
          .sort((a, b) => a.distance - b.distance)
          .slice(0, 10);
        let hits: Hit[] = [];
        expect(await vectorTableReads(async () => (hits = await semantic(dataset, query, 10, many)))).toEqual([]);
        expect(hits.map((h) => h.id)).toEqual(exact.map((e) => e.id));
      }
    } finally {
      Object.assign(selective, limits);
    }
  });

  it('finds the nearest chunks of a broad filter by checking graph candidates against it', async () => {
    const tenth = { must: [{ field: 'tag_set', match_any: ['tenth'] }] };
    const nowhere = { must: [{ field: 'tag_set', match_any: ['no such tag'] }] };
    const limits = { ...selective };
    // Every filter broad: none is answered by reading the chunks that pass.
    Object.assign(selective, { least: 0, share: 0 });
    try {
      let found = 0;
      for (const query of vectors(QUERIES, random)) {
        const exact = stored
          .map((v, i) => ({ id: ids[i], distance: distanceOf[metric](query, v) }))
          .filter((_, i) => i % 10 === 3)
          .sort((a, b) => a.distance - b.distance)
          .slice(0, 10);
        let hits: Hit[] = [];
        expect(await vectorTableReads(async () => (hits = await semantic(dataset, query, 10, tenth)))).toEqual([]);
        expect(hits).toHaveLength(10);
        for (const hit of hits) {
          const i = ids.indexOf(hit.id);
          expect(i % 10).toBe(3);
          expect(hit.score).toBeCloseTo(scoreOf[metric](distanceOf[metric](query, stored[i])), 5);
        }
        const truth = new Set(exact.map((e) => e.id));
        found += hits.filter((h) => truth.has(h.id)).length;
      }
      // Held to the recall the search promises (0.95 at 10): the graph is built by several threads,
      // so runs differ (0.975-1.0 seen for the metrics, 0.97-1.0 for the inner product).
      expect(found / (QUERIES * 10)).toBeGreaterThanOrEqual(0.95);
      // Deeper rounds until the graph has no more: nothing passes, and the search ends.
      expect(await semantic(dataset, vectors(1, random)[0], 10, nowhere)).toEqual([]);
    } finally {
      Object.assign(selective, limits);
    }
  });

  it('scores a chunk as pgvector does', async () => {
    for (const query of vectors(5, random)) {
      const held = await semantic(dataset, query);
      const distance = `embedding ${distanceOperators[metric]} ?::vector`;
      const rows: { id: string; score: number }[] = await db()('chunk_vectors')
        .whereRaw('chunk_id = any(?::uuid[])', [held.map((h) => h.id)])
        .select('chunk_id as id', db().raw(`${scoreSql[metric](`(${distance})`)} as score`, [vectorLiteral(query)]));
      const sqlScore = new Map(rows.map((r) => [r.id, Number(r.score)]));
      for (const hit of held) expect(hit.score).toBeCloseTo(sqlScore.get(hit.id)!, 5);
    }
  });

  it('scores a query with few nonzero components as on every component, to the bit', async () => {
    // The float4 values pgvector holds: the query's as given, a stored vector's as it was written.
    const float4 = (v: number[]) => v.map(Math.fround);
    const written = (v: number[]) => float4(JSON.parse(vectorLiteral(v)) as number[]);
    // The sums in component order, as the worker sums them on every component.
    const sum = (n: number, term: (i: number) => number) => Array.from({ length: n }, (_, i) => term(i)).reduce((s, t) => s + t, 0);
    const scoreTo = (query: number[], stored: number[]): number => {
      const [q, v] = [float4(query), written(stored)];
      const dot = sum(DIMENSION, (i) => q[i] * v[i]);
      if (metric === 'dot') return dot;
      if (metric === 'euclidean') return 1 / (1 + Math.sqrt(sum(DIMENSION, (i) => (q[i] - v[i]) ** 2)));
      const similarity = dot / Math.sqrt(sum(DIMENSION, (i) => q[i] ** 2) * sum(DIMENSION, (i) => v[i] ** 2));
      // The distance pgvector computes, then the score made of it: rounded as the service rounds them.
      return 1 - (1 - Math.max(-1, Math.min(1, similarity)));
    };
    const few = { must: [{ field: 'tag_set', match_any: ['few'] }] };
    for (const dense of vectors(5, random)) {
      // Five of the 24 components kept.
      const query = dense.map((x, i) => (i % 5 === 1 ? x : 0));
      const exact = stored
        .map((v, i) => ({ id: ids[i], score: scoreTo(query, v) }))
        .filter((_, i) => i % 100 === 0)
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, 10);
      expect(await semantic(dataset, query, 10, few)).toEqual(exact);
      for (const hit of await semantic(dataset, query)) expect(hit.score).toBe(scoreTo(query, stored[ids.indexOf(hit.id)]));
    }
  });

  it('ranks copies of one vector by chunk id, from the graph and among the chunks a filter passes', async () => {
    const copies = await service.newDataset(orgId, `copies ${metric}`, { DISTANCE_METRIC: metric, EMBEDDING_SIZE: DIMENSION });
    const [vector, ...others] = vectors(41, random);
    // The first chunk of each call is tagged "few": two copies and one other vector.
    const copyIds = await insertChunks(
      copies,
      Array.from({ length: 14 }, () => vector),
    );
    await insertChunks(copies, others);
    const lastCopies = await insertChunks(copies, [vector, vector]);
    expect(await service.services.vectors.ready(copies.id)).not.toBeNull();
    await service.services.bm25.ready(copies.id);
    const top = await semantic(copies, vector);
    expect(top.map((h) => h.id)).toEqual([...copyIds, ...lastCopies].sort().slice(0, 10));
    expect(new Set(top.map((h) => h.score)).size).toBe(1);
    const few = await semantic(copies, vector, 10, { must: [{ field: 'tag_set', match_any: ['few'] }] });
    expect(few).toHaveLength(3);
    expect(few.slice(0, 2).map((h) => h.id)).toEqual([copyIds[0], lastCopies[0]].sort());
  });

  it('ranks copies of one vector by chunk id in a long list a filter passes', async () => {
    const copies = await service.newDataset(orgId, `long copies ${metric}`, { DISTANCE_METRIC: metric, EMBEDDING_SIZE: DIMENSION });
    const [vector, ...others] = vectors(301, random);
    // Every hundredth chunk of a call is tagged "few", the others "many": 19 copies and 297 others.
    const copyIds = await insertChunks(
      copies,
      Array.from({ length: 20 }, () => vector),
    );
    const otherIds = await insertChunks(copies, others);
    expect(await service.services.vectors.ready(copies.id)).not.toBeNull();
    await service.services.bm25.ready(copies.id);
    // Under the inner product a longer vector may outrank the copies; the copies tie, and go by id.
    const tagged = (list: string[], of: (i: number) => number[]) => list.map((id, i) => ({ id, v: of(i), many: i % 100 !== 0 }));
    const exact = [...tagged(copyIds, () => vector), ...tagged(otherIds, (i) => others[i])]
      .filter((chunk) => chunk.many)
      .map(({ id, v }) => ({ id, distance: distanceOf[metric](vector, v) }))
      .sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : 1))
      .slice(0, 10);
    const limits = { ...selective };
    Object.assign(selective, { least: CHUNKS, share: 1 });
    try {
      const top = await semantic(copies, vector, 10, { must: [{ field: 'tag_set', match_any: ['many'] }] });
      expect(top.map((h) => h.id)).toEqual(exact.map((e) => e.id));
      if (metric !== 'dot') expect(top.map((h) => h.id)).toEqual(copyIds.slice(1).sort().slice(0, 10));
    } finally {
      Object.assign(selective, limits);
    }
  });
});

describe('calibration', () => {
  const random = prng(7);
  const defaults = { ...CALIBRATION };

  afterAll(() => {
    Object.assign(CALIBRATION, defaults);
  });

  /** A cosine dataset held with these calibration settings, its vectors and ids, after `CALIBRATION.queries` searches have calibrated it. */
  async function calibrated(name: string, settings: Partial<typeof CALIBRATION>) {
    Object.assign(CALIBRATION, defaults, { queries: 8 }, settings);
    const dataset = await service.newDataset(orgId, name, { DISTANCE_METRIC: 'cosine', EMBEDDING_SIZE: DIMENSION });
    const stored = vectors(CHUNKS, random);
    const ids = await insertChunks(dataset, stored);
    const held = (await service.services.vectors.ready(dataset.id))!;
    // Not calibrated yet: its searches scan every code, when they may read that much.
    expect(await held.calibration()).toBeNull();
    const uncalibrated = await held.nearest(Float32Array.from(vectors(1, random)[0]), 10, []);
    if (CHUNKS * DIMENSION <= CALIBRATION.scanBytes) expect(uncalibrated.by).toBe('scan');
    for (const query of vectors(CALIBRATION.queries - 1, random)) await semantic(dataset, query);
    // Once its graph has grown as far as it may.
    await vi.waitFor(async () => expect(await held.calibration()).not.toBeNull(), GROWN);
    return { dataset, stored, ids, held };
  }

  /** Waits for the graph to stop growing; how far it grew. */
  async function grown(held: HeldVectors): Promise<number> {
    await vi.waitFor(async () => expect((await held.graph()).growing).toBe(false), GROWN);
    return (await held.graph()).graphed;
  }

  /** `count` queries with only `nonzero` of their components set (as the built-in embedder's short queries have few). */
  function sparse(count: number, nonzero: number): number[][] {
    return vectors(count, random).map((v) => {
      const kept = new Set(Array.from({ length: nonzero }, () => Math.floor(random() * DIMENSION)));
      return v.map((x, i) => (kept.has(i) ? x : 0));
    });
  }

  /** Whether each answer is the exact nearest `5 + i % 10` of the stored vectors, with their distances, and found by `by`. */
  /** The `n` nearest of the stored vectors to `query` under cosine, by exact distance, nearest first. */
  function exactNearest(query: number[], stored: number[][], ids: string[], n: number) {
    return stored
      .map((v, j) => ({ id: ids[j], distance: distanceOf.cosine(query, v) }))
      .sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : 1))
      .slice(0, n);
  }

  function expectExact(answers: Nearest[], queries: number[][], stored: number[][], ids: string[], by: FoundBy) {
    queries.forEach((query, i) => {
      const exact = exactNearest(query, stored, ids, 5 + (i % 10));
      expect(answers[i].by).toBe(by);
      expect(answers[i].ids).toEqual(exact.map((e) => e.id));
      answers[i].distances.forEach((d, j) => {
        expect(d).toBeCloseTo(exact[j].distance, 5);
      });
    });
  }

  const nearestOf = (held: HeldVectors, queries: number[][]) =>
    Promise.all(queries.map((query, i) => held.nearest(Float32Array.from(query), 5 + (i % 10), [])));

  it('keeps the graph when it finds the true neighbours faster than a scan', async () => {
    // A scan weighed at a thousand times its time: the walk is the faster.
    const { held } = await calibrated('calibrated graph', { scanWeight: 1000 });
    const calibration = await held.calibration();
    expect(calibration?.walkFaster).toBe(true);
    expect(calibration?.recall).toBeGreaterThanOrEqual(0.95);
    expect((await held.nearest(Float32Array.from(vectors(1, random)[0]), 10, [])).by).toBe('graph');
  });

  it('grows the graph whole once its trial finds the true neighbours, then walks it where faster', async () => {
    const { dataset, held } = await calibrated('grown graph', { trialSlots: 1000, scanWeight: 1000 });
    // Calibrated on the trial first, then again on the whole graph.
    await vi.waitFor(async () => expect(await held.calibration()).toMatchObject({ walkFaster: true }), GROWN);
    expect(await grown(held)).toBe(CHUNKS);
    expect((await held.calibration())?.recall).toBeGreaterThanOrEqual(0.95);
    expect((await held.nearest(Float32Array.from(vectors(1, random)[0]), 10, [])).by).toBe('graph');
    const written = vectors(20, random);
    const writtenIds = await insertChunks(dataset, written);
    for (const [i, vector] of written.entries()) expect((await semantic(dataset, vector, 1))[0].id).toBe(writtenIds[i]);
  });

  it('walks a graph that lags its set with the slots it does not hold yet, ranked exactly', async () => {
    // A trial over the whole set falls short: the graph grows no further until a scan would read
    // over the budget, as every code does once 100 more vectors are written.
    const { dataset, held } = await calibrated('lagging graph', { trialSlots: CHUNKS, target: 1.01, scanBytes: CHUNKS * DIMENSION });
    expect(await grown(held)).toBe(CHUNKS);
    const written = vectors(100, random);
    const writtenIds = await insertChunks(dataset, written);
    // Caught up with the writes; the graph has not taken them.
    expect(await service.services.vectors.held(dataset.id, DIMENSION, 'cosine')).toBe(held);
    const found = await held.nearest(Float32Array.from(written[99]), 1, []);
    expect(found).toMatchObject({ by: 'graph', ids: [writtenIds[99]] });
    expect(await grown(held)).toBe(CHUNKS + 100);
  });

  it('grows no graph beyond a trial that falls short, and scans exactly', async () => {
    const { stored, ids, held } = await calibrated('trial graph', { trialSlots: 1000, target: 1.01 });
    expect(await grown(held)).toBe(1000);
    const queries = vectors(QUERIES, random);
    expectExact(await nearestOf(held, queries), queries, stored, ids, 'scan');
    expect(await held.graph()).toEqual({ graphed: 1000, growing: false });
  });

  it('scans a set whose scan was the faster, exactly, though the graph finds the true neighbours', async () => {
    // A scan weighed at a thousandth of its time: the scan is the faster (which of the two is
    // faster on so small a set depends on the machine and the minute).
    const { stored, ids, held } = await calibrated('calibrated faster scan', { scanWeight: 0.001 });
    const calibration = await held.calibration();
    expect(calibration?.recall).toBeGreaterThanOrEqual(0.95);
    expect(calibration?.walkFaster).toBe(false);
    const queries = vectors(QUERIES, random);
    expectExact(await nearestOf(held, queries), queries, stored, ids, 'scan');
  });

  it('scans every vector when the graph falls short of the target, with exact answers that follow deletes', async () => {
    // No graph reaches a recall above 1: the scan is chosen.
    const { dataset, stored, ids, held } = await calibrated('calibrated scan', { target: 1.01 });
    const queries = vectors(QUERIES, random);
    // Asked all at once: scans asked for together are made in one pass, each query its own answer.
    expectExact(await nearestOf(held, queries), queries, stored, ids, 'scan');
    const [query] = vectors(1, random);
    const [first] = await semantic(dataset, query);
    await db()('chunks').where({ id: first.id }).del();
    expect((await semantic(dataset, query)).map((h) => h.id)).not.toContain(first.id);
  });

  it('scans only the columns a sparse query sets when every code would be more than it may read', async () => {
    // Every code is over the budget; a query's 4 columns of 3,000 codes are not. A scan over the
    // budget has the graph grown whole, though its trial fell short, and is walked once it is.
    const { dataset, stored, ids, held } = await calibrated('calibrated over budget', { target: 1.01, trialSlots: 1000, scanBytes: CHUNKS * DIMENSION - 1 });
    expect(await grown(held)).toBe(CHUNKS);
    const dense = vectors(QUERIES, random);
    for (const answer of await nearestOf(held, dense)) expect(answer.by).toBe('graph');
    const queries = sparse(QUERIES, 4);
    expectExact(await nearestOf(held, queries), queries, stored, ids, 'scan');
    const [query] = queries;
    const [first] = await semantic(dataset, query);
    await db()('chunks').where({ id: first.id }).del();
    expect((await semantic(dataset, query)).map((h) => h.id)).not.toContain(first.id);
  });

  it('offers a long scan by column to a helper thread, with the same exact answers', async () => {
    const { dataset, stored, ids, held } = await calibrated('calibrated shared scan', { target: 1.01, scanBytes: CHUNKS * DIMENSION - 1, splitBytes: 0 });
    const queries = sparse(QUERIES, 4);
    const shared = await held.sharedScans();
    expectExact(await nearestOf(held, queries), queries, stored, ids, 'scan');
    // The helper joins the scans it reaches before the worker has claimed every piece: exact either way.
    expect((await held.sharedScans()) - shared).toBeLessThanOrEqual(QUERIES);
    // Hybrid search scores BM25 on this thread meanwhile: its scans take a helper only once the
    // keyword list is made (vectors/handoff.js), with the same exact answers.
    for (const vector of queries) {
      const hybrid = await retrieve(service.services, 'hybrid', { dataset, query: 'unmatched', vector, limit: 10, offset: 0 });
      expect(hybrid.hits.map((h) => h.id)).toEqual(exactNearest(vector, stored, ids, 10).map((e) => e.id));
    }
    const among = vi.spyOn(held, 'nearestAmong');
    try {
      // A list made after the scan: no helper joined it, and its chunks are ranked by a second call.
      const before = await held.sharedScans();
      const late = () => new Promise<string[]>((resolve) => setTimeout(() => resolve(ids.slice(0, 3)), 300));
      const found = await held.nearestWith(Float32Array.from(queries[0]), 10, late, { shareScan: 'delivered' });
      expect(found.ids).toEqual(exactNearest(queries[0], stored, ids, 10).map((e) => e.id));
      expect(await held.sharedScans()).toBe(before);
      expect(among).toHaveBeenCalledTimes(1);
      // A list made at once: handed over, or measured after when the scan won the race; exact either way.
      for (const query of queries) {
        const early = await held.nearestWith(Float32Array.from(query), 10, async () => ids.slice(0, 3), { shareScan: 'delivered' });
        expect(early.ids).toEqual(exactNearest(query, stored, ids, 10).map((e) => e.id));
      }
      // Other searches in flight (no sharing): a list handed over takes no helper.
      const quiet = await held.sharedScans();
      for (const query of queries) await held.nearestWith(Float32Array.from(query), 10, async () => ids.slice(0, 3), { shareScan: false });
      expect(await held.sharedScans()).toBe(quiet);
    } finally {
      among.mockRestore();
    }
    const [query] = queries;
    const [first] = await semantic(dataset, query);
    await db()('chunks').where({ id: first.id }).del();
    expect((await semantic(dataset, query)).map((h) => h.id)).not.toContain(first.id);
  });
});

describe('pgvector index', () => {
  /** Whether the dataset has its partial HNSW index on chunk_vectors. */
  async function hasIndex(dataset: DatasetRow): Promise<boolean> {
    const { rows } = await db().raw<{ rows: unknown[] }>('select 1 from pg_indexes where indexname = ?', [vectorIndexName(dataset.id)]);
    return rows.length > 0;
  }

  it('is kept only for datasets whose vectors are not held in memory', async () => {
    for (const [metric, kept] of [
      ['cosine', false],
      ['dot', false],
      ['euclidean', false],
      ['manhattan', true],
    ] as const) {
      const dataset = await service.newDataset(orgId, `index ${metric}`, { DISTANCE_METRIC: metric, EMBEDDING_SIZE: DIMENSION });
      const written = await createChunk({
        client: service.client(),
        headers: { 'SVC-Dataset': dataset.id },
        body: { chunk_html: 'a chunk' },
      });
      expect(written.response.status).toBe(200);
      expect(await hasIndex(dataset), metric).toBe(kept);
    }
  });

  it('is dropped by migration 020 where an earlier version built it for held vectors', async () => {
    const held = await service.newDataset(orgId, 'index before 020', { EMBEDDING_SIZE: DIMENSION });
    const manhattan = await service.newDataset(orgId, 'manhattan before 020', { DISTANCE_METRIC: 'manhattan', EMBEDDING_SIZE: DIMENSION });
    await ensureVectorIndex(db(), held.id, DIMENSION, 'cosine');
    await ensureVectorIndex(db(), manhattan.id, DIMENSION, 'manhattan');
    expect(await hasIndex(held)).toBe(true);
    await dropHeldVectorIndexes(db());
    expect(await hasIndex(held)).toBe(false);
    expect(await hasIndex(manhattan)).toBe(true);
  });
});

describe('kept current', () => {
  let dataset: DatasetRow;
  let ids: string[];
  const random = prng(11);

  beforeAll(async () => {
    dataset = await service.newDataset(orgId, 'held current', { DISTANCE_METRIC: 'cosine', EMBEDDING_SIZE: DIMENSION });
    ids = await insertChunks(dataset, vectors(500, random));
    expect(await service.services.vectors.ready(dataset.id)).not.toBeNull();
  }, 60_000);

  const target = Array.from({ length: DIMENSION }, (_, i) => (i % 2 === 0 ? 5 : -5));

  it('logs every vector write and delete as a version of the dataset', async () => {
    const before = await datasetVersion(db(), dataset.id);
    await writeVectors(db(), dataset.id, [{ chunkId: ids[0], vector: vectors(1, random)[0] }]);
    const written = await datasetVersion(db(), dataset.id);
    expect(written).toBeGreaterThan(before);
    // The same vector again changes nothing.
    const [row] = await db()('chunk_vectors').where({ chunk_id: ids[0] }).select(db().raw('embedding::text as v'));
    await writeVectors(db(), dataset.id, [{ chunkId: ids[0], vector: JSON.parse(row.v) }]);
    expect(await datasetVersion(db(), dataset.id)).toBe(written);
  });

  it('sees a new vector, a replaced one and a deleted chunk at the next search', async () => {
    const [added] = await insertChunks(dataset, [target]);
    expect((await semantic(dataset, target))[0]).toMatchObject({ id: added });
    expect((await semantic(dataset, target))[0].score).toBeCloseTo(1, 5);

    await writeVectors(db(), dataset.id, [{ chunkId: added, vector: target.map((x) => -x) }]);
    expect((await semantic(dataset, target)).map((h) => h.id)).not.toContain(added);

    await writeVectors(db(), dataset.id, [{ chunkId: ids[1], vector: target }]);
    expect((await semantic(dataset, target))[0].id).toBe(ids[1]);
    await db()('chunks').where({ id: ids[1] }).del();
    const after = await semantic(dataset, target, 500);
    expect(after.map((h) => h.id)).not.toContain(ids[1]);
    expect(after).toHaveLength(500);
  });

  it('sees a write made while the held vectors were settled, though the search started on them before their check', async () => {
    // A second with no change applied: the next search starts on the vectors held before it checks them.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const elsewhere = Array.from({ length: DIMENSION }, (_, i) => (i % 3 === 0 ? 7 : -3));
    const [added] = await insertChunks(dataset, [elsewhere]);
    expect((await semantic(dataset, elsewhere))[0]).toMatchObject({ id: added });
  });

  it("has a search on settled held vectors checked by the statement reading its page's rows, and still see a write", async () => {
    // The caller's read of the page's rows, as the search operations make it (search/index.ts).
    const readAhead = async (ids: string[], query?: string) => {
      const { version, terms } = await pageRows(db(), dataset.id, ids, query ?? null);
      return { version, terms };
    };
    const search = async (vector: number[]) =>
      (await retrieve(service.services, 'semantic', { dataset, query: 'q', vector, limit: 10, offset: 0, readAhead })).hits.map((h) => h.id);
    expect(await search(target)).toEqual((await semantic(dataset, target)).map((h) => h.id));
    // A second with no change applied: the held vectors are settled.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const statements: string[] = [];
    const listener = (q: { sql: string }) => statements.push(q.sql);
    db().on('query', listener);
    let found: string[];
    try {
      found = await search(target);
    } finally {
      db().off('query', listener);
    }
    expect(found).toEqual((await semantic(dataset, target)).map((h) => h.id));
    // The rows' statement confirmed the version: the search read no change log of its own.
    expect(statements.filter((sql) => sql.includes('bm25_changes'))).toHaveLength(0);
    expect(statements.filter((sql) => sql.includes('dataset_version'))).toHaveLength(1);
    // A write behind the settled vectors: the version read with the rows differs, and the search is made again.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const elsewhere = Array.from({ length: DIMENSION }, (_, i) => (i % 5 === 0 ? 9 : -2));
    const [added] = await insertChunks(dataset, [elsewhere]);
    expect((await search(elsewhere))[0]).toBe(added);
  });

  it('keeps a list ranked again and again ready, as exact as the list sent, until the set changes', async () => {
    const held = (await service.services.vectors.held(dataset.id, DIMENSION, 'cosine'))!;
    const random = prng(23);
    // Long enough to be screened by its codes: the kept list's copies of them are read.
    const listed = ids.filter((_, i) => i % 3 !== 1).slice(0, 300);
    const made = vi.fn(() => packIds(listed));
    const key = `list ${held.version}`;
    for (const query of vectors(5, random)) {
      const values = Float32Array.from(query);
      const sent = await held.nearestAmong(values, 10, packIds(listed));
      const kept = await held.nearestInList(values, 10, key, made);
      expect(kept.ids).toEqual(sent.ids);
      expect(Array.from(kept.distances)).toEqual(Array.from(sent.distances));
    }
    // Made once: later searches send the key alone.
    expect(made).toHaveBeenCalledTimes(1);
    // The set changes (a chunk of the list deleted): the list is made again, without it.
    await db()('chunks').where({ id: listed[0] }).del();
    const current = (await service.services.vectors.held(dataset.id, DIMENSION, 'cosine'))!;
    expect(current).toBe(held);
    const toward = Float32Array.from(
      (await db()('chunk_vectors').where({ chunk_id: listed[1] }).select(db().raw('embedding::text as v')))[0].v.slice(1, -1).split(','),
      Number,
    );
    const after = await held.nearestInList(toward, 10, key, made);
    expect(made).toHaveBeenCalledTimes(2);
    expect(after.ids).not.toContain(listed[0]);
    expect(after.ids[0]).toBe(listed[1]);
    expect(after.ids).toEqual((await held.nearestAmong(toward, 10, packIds(listed))).ids);
  });

  it('has hybrid search read the version once, with BM25 statistics, and still see a write', async () => {
    // A query no chunk's terms hold: the fused list is the semantic one.
    const hybrid = async (vector: number[]) => (await retrieve(service.services, 'hybrid', { dataset, query: 'unmatched', vector, limit: 10, offset: 0 })).hits;
    await hybrid(target);
    const statements: string[] = [];
    const listener = (q: { sql: string }) => statements.push(q.sql);
    db().on('query', listener);
    try {
      await hybrid(target);
    } finally {
      db().off('query', listener);
    }
    // Nothing changed: the statistics' version shows the held vectors current, no change log read.
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain('bm25_term_counts');

    await writeVectors(db(), dataset.id, [{ chunkId: ids[2], vector: target }]);
    expect((await hybrid(target))[0].id).toBe(ids[2]);
  });

  it("has semantic search with a tag filter look at the change log once, for BM25's tags and the held vectors, and still see a write", async () => {
    const filter: T.ChunkFilter = { must: [{ field: 'tag_set', match_any: ['tenth'] }] };
    expect(await service.services.bm25.ready(dataset.id)).not.toBeNull();
    await semantic(dataset, target, 10, filter);
    const statements: string[] = [];
    const listener = (q: { sql: string }) => statements.push(q.sql);
    db().on('query', listener);
    try {
      await semantic(dataset, target, 10, filter);
    } finally {
      db().off('query', listener);
    }
    // The version BM25's tags were brought to shows the held vectors current.
    expect(statements.filter((sql) => sql.includes('bm25_changes'))).toHaveLength(1);
    expect(statements.filter((sql) => sql.includes('"tag_set"'))).toEqual([]);

    // Chunk 13 is tagged 'tenth' (insertChunks).
    await writeVectors(db(), dataset.id, [{ chunkId: ids[13], vector: target }]);
    expect((await semantic(dataset, target, 10, filter))[0].id).toBe(ids[13]);
  });

  it("has hybrid search read a selective filter's passing chunks once for both lists, and a tag filter's none", async () => {
    const own = await service.newDataset(orgId, 'hybrid filter', { DISTANCE_METRIC: 'cosine', EMBEDDING_SIZE: DIMENSION });
    const list = vectors(300, random);
    // Rows with their BM25 terms, as the write path stores them, so that the keyword list reads the filter too.
    const rows: { id: string }[] = await db()('chunks')
      .insert(
        list.map((_, i) => ({
          dataset_id: own.id,
          chunk_html: `chunk ${i}`,
          bm25_terms: db().raw("to_tsvector('english', ?)", [`chunk ${i}`]),
          bm25_length: 2,
          tag_set: [i % 50 === 0 ? 'few' : 'many'],
          num_value: i % 50 === 0 ? 1 : 0,
        })),
      )
      .returning('id');
    await writeVectors(
      db(),
      own.id,
      rows.map((r, i) => ({ chunkId: r.id, vector: list[i] })),
    );
    await service.services.bm25.ready(own.id);
    await service.services.vectors.ready(own.id);
    const hybrid = async (filter: T.ChunkFilter) =>
      (await retrieve(service.services, 'hybrid', { dataset: own, query: 'chunk', vector: target, limit: 10, offset: 0, filter })).hits;
    const traced = async (filter: T.ChunkFilter) => {
      await hybrid(filter);
      const statements: string[] = [];
      const listener = (q: { sql: string }) => statements.push(q.sql);
      db().on('query', listener);
      try {
        return { hits: await hybrid(filter), statements };
      } finally {
        db().off('query', listener);
      }
    };
    // Every chunk passing (one in fifty) is in both lists, so every one is returned.
    const passing = rows
      .filter((_, i) => i % 50 === 0)
      .map((r) => r.id)
      .sort();
    const numbered = await traced({ must: [{ field: 'num_value', match_any: [1] }] });
    expect(numbered.statements.filter((sql) => sql.startsWith('explain'))).toHaveLength(1);
    expect(numbered.statements.filter((sql) => sql.includes('"num_value" =') && !sql.startsWith('explain'))).toHaveLength(1);
    expect(numbered.hits.map((h) => h.id).sort()).toEqual(passing);
    const tagged = await traced({ must: [{ field: 'tag_set', match_any: ['few'] }] });
    expect(tagged.statements.filter((sql) => sql.includes('"tag_set"'))).toEqual([]);
    expect(tagged.hits.map((h) => h.id).sort()).toEqual(passing);
  });

  it("starts a selective tag filter's list on settled indexes before their check, and keeps it only when no write came in between", async () => {
    const own = await service.newDataset(orgId, 'settled filter', { DISTANCE_METRIC: 'cosine', EMBEDDING_SIZE: DIMENSION });
    const ids = await insertChunks(own, vectors(300, random));
    await service.services.bm25.ready(own.id);
    await service.services.vectors.ready(own.id);
    // A second with no change applied: both indexes are settled.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const few: T.ChunkFilter = { must: [{ field: 'tag_set', match_any: ['few'] }] };
    const search = async (type: 'semantic' | 'hybrid', vector: number[] = target) =>
      (await retrieve(service.services, type, { dataset: own, query: 'unmatched', vector, limit: 10, offset: 0, filter: few })).hits;
    // The settled answer ranks the filter's list kept ready; the checked one, the ids the table gives.
    const inList = vi.spyOn(HeldVectors.prototype, 'nearestInList');
    const among = vi.spyOn(HeldVectors.prototype, 'nearestAmong');
    try {
      // Nothing written: the passing chunks are measured once, before the version is known, and kept.
      for (const type of ['semantic', 'hybrid'] as const) {
        among.mockClear();
        inList.mockClear();
        const hits = await search(type);
        expect(inList).toHaveBeenCalledTimes(1);
        expect(among).not.toHaveBeenCalled();
        expect(hits.map((h) => h.id).sort()).toEqual(ids.filter((_, i) => i % 100 === 0).sort());
      }
      // A write the indexes have not caught up with: the early answer is made again once they have.
      // Each write a direction of its own, so that the chunk written is the one nearest to it.
      for (const [k, type] of (['semantic', 'hybrid'] as const).entries()) {
        await new Promise((resolve) => setTimeout(resolve, 1100));
        const direction = target.map((x, i) => (i === k ? -x : x));
        const [added] = await insertChunks(own, [direction]);
        among.mockClear();
        inList.mockClear();
        expect((await search(type, direction))[0].id).toBe(added);
        expect(inList).toHaveBeenCalledTimes(1);
        expect(among).toHaveBeenCalledTimes(1);
      }
    } finally {
      among.mockRestore();
      inList.mockRestore();
    }
  });
});
