// The ranking stage against the engines of the mode: each sort option reorders a crafted list of
// candidates (explicit scores over a small crafted corpus), so every expected order and score can
// be worked out by hand from the formulas in server/search/ranking/. The reranker seam is tested
// against a local stand-in server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { HttpReranker } from '../../server/engines/reranker/http.js';
import { RerankerError } from '../../server/engines/reranker/index.js';
import { HttpError } from '../../server/errors.js';
import { planRanking, rankHits, rankingWindow } from '../../server/search/ranking/index.js';
import { diversify, MMR_PICKS } from '../../server/search/ranking/mmr.js';
import type { SearchPayload } from '../../server/search/request.js';
import type { Hit } from '../../server/search/types.js';
import { startStandInReranker, type StandInReranker } from '../support/reranker.js';
import { ALLOW_LOCAL_STAND_INS, localStandIns } from '../support/outbound.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let reranker: StandInReranker;
let orgId: string;
/** The corpus's dataset, with the stand-in reranker configured. */
let dataset: DatasetRow;
/** An empty dataset without a reranker. */
let plain: DatasetRow;
const ids = new Map<string, string>();
const idOf = (tracking: string) => ids.get(tracking)!;
const trackingOf = (id: string) => [...ids].find(([, v]) => v === id)![0];

const AMSTERDAM = { lat: 52.37, lon: 4.9 };
/**
 * The corpus: `c` has no num_value, time stamp, location or weight (1 by default); `e` is created
 * last (newest created_at).
 * Dates: d 2023-01-01 < a 2024-01-01 < b 2024-06-01 < e 2025-01-01.
 */
const CORPUS: (T.ChunkReqPayload & { tracking_id: string })[] = [
  {
    tracking_id: 'a',
    chunk_html: '<p>Alpine tent for four people, waterproof and light.</p>',
    num_value: 5,
    weight: 0,
    time_stamp: '2024-01-01T00:00:00',
    tag_set: ['camp'],
    location: AMSTERDAM,
  },
  {
    tracking_id: 'b',
    chunk_html: '<p>Kayak paddle made of carbon.</p>',
    num_value: 2,
    weight: 2,
    time_stamp: '2024-06-01T00:00:00',
    tag_set: ['water'],
    location: { lat: 52.52, lon: 13.4 },
  },
  { tracking_id: 'c', chunk_html: '<p>Kayak with two seats for calm rivers and lakes.</p>', tag_set: ['water', 'sale'] },
  {
    tracking_id: 'd',
    chunk_html: '<p>Camping stove that boils water fast.</p>',
    num_value: 9,
    weight: 0.5,
    time_stamp: '2023-01-01T00:00:00',
    tag_set: ['camp', 'sale'],
    location: { lat: 38.72, lon: -9.14 },
  },
];
const LAST: T.ChunkReqPayload & { tracking_id: string } = {
  tracking_id: 'e',
  chunk_html: '<p>Sleeping bag rated to minus ten degrees.</p>',
  num_value: 7,
  weight: 0,
  time_stamp: '2025-01-01T00:00:00',
  tag_set: ['camp'],
  location: { lat: 52.3, lon: 4.76 },
};
/** Near duplicates of `c` and a text unlike them, for MMR. */
const MMR_CORPUS = [
  { tracking_id: 'kayak-1', chunk_html: '<p>Kayak with two seats for calm rivers and lakes.</p>' },
  { tracking_id: 'kayak-2', chunk_html: '<p>Kayak with two seats for calm lakes and rivers.</p>' },
  { tracking_id: 'stars', chunk_html: '<p>A reflecting telescope shows the rings of Saturn.</p>' },
];

async function addChunks(target: DatasetRow, chunks: T.ChunkReqPayload[]): Promise<void> {
  const result = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': target.id }, body: chunks });
  expect(result.response.status, JSON.stringify(result.error)).toBe(200);
  for (const chunk of result.data!.chunk_metadata as T.ChunkMetadata[]) ids.set(chunk.tracking_id!, chunk.id);
}

/** Candidates in this order with these scores. */
const hitsOf = (scored: [string, number][]): Hit[] => scored.map(([tracking, score]) => ({ id: idOf(tracking), score }));
/** The retrieval order used below: a 1.0, b 0.8, c 0.6, d 0.4, e 0.2. */
const FIVE: [string, number][] = [
  ['a', 1],
  ['b', 0.8],
  ['c', 0.6],
  ['d', 0.4],
  ['e', 0.2],
];

function payload(sortOptions: T.SortOptions | null, more: Partial<T.SearchChunksReqPayload> = {}): SearchPayload {
  return { query: 'kayak tent', search_type: 'semantic', sort_options: sortOptions, ...more };
}

async function rank(
  sortOptions: T.SortOptions | null,
  scored: [string, number][],
  on: DatasetRow = dataset,
  more: Partial<T.SearchChunksReqPayload> = {},
): Promise<[string, number][]> {
  const request = payload(sortOptions, more);
  const ranked = await rankHits(
    service.services,
    { dataset: on, payload: request, type: request.search_type as 'semantic', queries: [{ text: 'kayak tent', weight: 1 }] },
    hitsOf(scored),
  );
  return ranked.map((h) => [trackingOf(h.id), h.score]);
}
const order = (ranked: [string, number][]) => ranked.map(([t]) => t);

async function refused(promise: Promise<unknown> | (() => unknown), message: RegExp): Promise<void> {
  const error = await (typeof promise === 'function' ? Promise.resolve().then(promise) : promise).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  expect((error as HttpError).status).toBe(400);
  expect((error as HttpError).message).toMatch(message);
}

beforeAll(async () => {
  [service, reranker] = await Promise.all([startTestService(ALLOW_LOCAL_STAND_INS), startStandInReranker()]);
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Ranking' } })).data!.id;
  dataset = await service.newDataset(orgId, 'ranking fixture', { RERANKER_BASE_URL: reranker.baseUrl });
  plain = await service.newDataset(orgId, 'no reranker');
  await addChunks(dataset, CORPUS);
  await addChunks(dataset, [LAST]);
  await addChunks(dataset, MMR_CORPUS);
});

afterAll(async () => {
  await Promise.all([service?.stop(), reranker?.close()]);
});

describe('sort_by a field', () => {
  it('orders by num_value, descending by default, chunks without it last; the value is the score', async () => {
    expect(await rank({ sort_by: { field: 'num_value' } }, FIVE)).toEqual([
      ['d', 9],
      ['e', 7],
      ['a', 5],
      ['b', 2],
      ['c', 0],
    ]);
    expect(order(await rank({ sort_by: { field: 'num_value', direction: 'asc' } }, FIVE))).toEqual(['b', 'a', 'e', 'd', 'c']);
  });

  it('orders by weight, equal values in the retrieval order', async () => {
    // c was created without a weight: 1.
    expect(await rank({ sort_by: { field: 'weight', direction: 'desc' } }, FIVE)).toEqual([
      ['b', 2],
      ['c', 1],
      ['d', 0.5],
      ['a', 0],
      ['e', 0],
    ]);
  });

  it('orders by time_stamp (seconds since 1970) and by created_at', async () => {
    expect(await rank({ sort_by: { field: 'time_stamp' } }, FIVE)).toEqual([
      ['e', Date.UTC(2025, 0, 1) / 1000],
      ['b', Date.UTC(2024, 5, 1) / 1000],
      ['a', Date.UTC(2024, 0, 1) / 1000],
      ['d', Date.UTC(2023, 0, 1) / 1000],
      ['c', 0],
    ]);
    // e was created by a later request than a to d, which share one.
    expect(order(await rank({ sort_by: { field: 'created_at' } }, FIVE))[0]).toBe('e');
    expect(order(await rank({ sort_by: { field: 'created_at', direction: 'asc' } }, FIVE)).at(-1)).toBe('e');
  });
});

describe('adjustments', () => {
  it('use_weights multiplies by the chunk weight (0 counts as 1), and is on whenever sort_options is given', async () => {
    // a 1 × 1, b 0.8 × 2, c 0.6 × 1, d 0.4 × 0.5, e 0.2 × 1
    const expected = [
      ['b', 1.6],
      ['a', 1],
      ['c', 0.6],
      ['d', 0.2],
      ['e', 0.2],
    ];
    const weighted = await rank({ use_weights: true }, FIVE);
    expect(order(weighted)).toEqual(expected.map(([t]) => t));
    for (const [i, [, score]] of weighted.entries()) expect(score).toBeCloseTo(expected[i][1] as number, 10);
    expect(order(await rank({}, FIVE))).toEqual(order(weighted));
    expect(await rank({ use_weights: false, tag_weights: {} }, FIVE)).toEqual(FIVE);
  });

  it('tag_weights multiplies by the weight of each tag the chunk carries', async () => {
    // a camp 0.5, b none, c sale 3, d camp × sale 1.5, e camp 0.5
    const ranked = await rank({ use_weights: false, tag_weights: { sale: 3, camp: 0.5 } }, FIVE);
    expect(order(ranked)).toEqual(['c', 'b', 'd', 'a', 'e']);
    expect(ranked.map(([, s]) => s)).toEqual([0.6 * 3, 0.8, 0.4 * 1.5, 0.5, 0.1].map((s) => expect.closeTo(s, 10)));
  });

  it('recency_bias blends relevance with how recent the time stamp is', async () => {
    // relevance a 1, b 0.75, d 0.25, e 0; recency d 0, a 365/731, b 517/731, e 1 (days since 2023-01-01 over 731).
    const four: [string, number][] = [
      ['a', 1],
      ['b', 0.8],
      ['d', 0.4],
      ['e', 0.2],
    ];
    const ranked = await rank({ use_weights: false, recency_bias: 3 }, four);
    expect(order(ranked)).toEqual(['e', 'b', 'a', 'd']);
    expect(ranked.map(([, s]) => s)).toEqual([3, 0.75 + (3 * 517) / 731, 1 + (3 * 365) / 731, 0.25].map((s) => expect.closeTo(s, 6)));
    expect(order(await rank({ use_weights: false, recency_bias: 0 }, four))).toEqual(['a', 'b', 'd', 'e']);
    // A gentle bias keeps the better match first.
    expect(order(await rank({ use_weights: false, recency_bias: 0.5 }, four))).toEqual(['a', 'b', 'e', 'd']);
  });

  it('recency_bias uses created_at for a chunk without a time stamp', async () => {
    // c was created now, after d's 2023 time stamp: c recency 1, relevance 0; d recency 0, relevance 1.
    expect(
      await rank({ use_weights: false, recency_bias: 2 }, [
        ['d', 1],
        ['c', 0.1],
      ]),
    ).toEqual([
      ['c', 2],
      ['d', 1],
    ]);
  });

  it('location_bias favours chunks near the point; a chunk without a location counts as farthest', async () => {
    // relevance d 1, b 0.75, a 0.5, e 0
    const four: [string, number][] = [
      ['d', 1],
      ['b', 0.8],
      ['a', 0.6],
      ['e', 0.2],
    ];
    // Strong bias: the distance order from Amsterdam (a 0 km, e ~12 km, b ~580 km, d ~1860 km).
    const ranked = await rank({ use_weights: false, location_bias: { location: AMSTERDAM, bias: 10 } }, four);
    expect(order(ranked)).toEqual(['a', 'e', 'b', 'd']);
    expect(ranked[0][1]).toBeCloseTo(0.5 + 10, 10);
    expect(ranked.at(-1)![1]).toBeCloseTo(1 + 0, 10);
    expect(
      await rank({ use_weights: false, location_bias: { location: AMSTERDAM, bias: 2 } }, [
        ['c', 1],
        ['a', 0],
      ]),
    ).toEqual([
      ['a', 2],
      ['c', 1],
    ]);
  });

  it('combines as (relevance + biases) × weight × tag weights', async () => {
    // relevance a 1, d 0; recency a 1, d 0 (2024 vs 2023); × weights a 1, d 0.5; × tags (sale 4) d only.
    expect(
      await rank({ recency_bias: 1, tag_weights: { sale: 4 } }, [
        ['a', 0.9],
        ['d', 0.1],
      ]),
    ).toEqual([
      ['a', 2],
      ['d', 0],
    ]);
    expect(
      await rank({ location_bias: { location: { lat: 38.72, lon: -9.14 }, bias: 2 }, tag_weights: { sale: 4 } }, [
        ['a', 0.9],
        ['d', 0.1],
      ]),
    ).toEqual([
      ['d', 2 * 0.5 * 4],
      ['a', 1],
    ]);
  });
});

describe('mmr', () => {
  const three: [string, number][] = [
    ['kayak-1', 1],
    ['kayak-2', 0.95],
    ['stars', 0.9],
  ];

  it('moves a near duplicate below a different chunk; scores never rise', async () => {
    const ranked = await rank({ use_weights: false, mmr: { use_mmr: true } }, three);
    expect(order(ranked)).toEqual(['kayak-1', 'stars', 'kayak-2']);
    expect(ranked[0][1]).toBeCloseTo(0.5, 10);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i][1]).toBeLessThanOrEqual(ranked[i - 1][1]);
  });

  it('scores by (1 − λ) × relevance − λ × similarity to the picks; past MMR_PICKS, by that against the picks', () => {
    // Relevance 1, 0.75, 0.5, 0.25, 0; x1 repeats x0, y1 repeats y0, xy is between.
    const [x, y, xy] = [
      [1, 0],
      [0, 1],
      [0.6, 0.8],
    ].map((v) => Float64Array.from(v));
    const hits = [
      ['x0', 1],
      ['x1', 0.9],
      ['y0', 0.8],
      ['y1', 0.7],
      ['xy', 0.6],
    ].map(([id, score]) => ({ id: id as string, score: score as number }));
    const vectors = new Map([
      ['x0', x],
      ['x1', x],
      ['y0', y],
      ['y1', y],
      ['xy', xy],
    ]);
    const expected = [
      { id: 'x0', score: 0.5 },
      { id: 'y0', score: 0.25 },
      { id: 'x1', score: 0.375 - 0.5 },
      { id: 'y1', score: 0.125 - 0.5 },
      { id: 'xy', score: -0.4 },
    ];
    expect(diversify(hits, vectors, 0.5)).toEqual(expected.map(({ id, score }) => ({ id, score: expect.closeTo(score, 10) })));
    expect(MMR_PICKS).toBeGreaterThanOrEqual(100);
    const two = diversify(hits, vectors, 0.5, 2);
    expect(two.map((h) => h.id)).toEqual(expected.map((h) => h.id));
    for (let i = 1; i < two.length; i++) expect(two[i].score).toBeLessThanOrEqual(two[i - 1].score);
  });

  it('keeps the relevance order at lambda 0 or with use_mmr false', async () => {
    expect(await rank({ use_weights: false, mmr: { use_mmr: true, mmr_lambda: 0 } }, three)).toEqual(three);
    expect(await rank({ use_weights: false, mmr: { use_mmr: false, mmr_lambda: 0.9 } }, three)).toEqual(three);
  });
});

describe('sort_by a search type', () => {
  it.each(['fulltext', 'bm25'] as const)('%s: the candidates the rerank query matches first, the others after with 0', async (type) => {
    const ranked = await rank({ use_weights: false, sort_by: { rerank_type: type, rerank_query: 'kayak' } }, FIVE);
    expect(order(ranked).slice(0, 2).sort()).toEqual(['b', 'c']);
    expect(ranked.slice(0, 2).every(([, s]) => s > 0)).toBe(true);
    expect(ranked.slice(2)).toEqual([
      ['a', 0],
      ['d', 0],
      ['e', 0],
    ]);
  });

  it.each(['fulltext', 'bm25', 'semantic'] as const)('%s: scores only the candidates, never other chunks', async (type) => {
    const ranked = await rank({ use_weights: false, sort_by: { rerank_type: type, rerank_query: 'kayak seats for calm rivers' } }, [
      ['a', 1],
      ['d', 0.5],
    ]);
    expect(order(ranked).sort()).toEqual(['a', 'd']);
  });

  it('semantic: the candidate closest to the rerank query first', async () => {
    const ranked = await rank({ use_weights: false, sort_by: { rerank_type: 'semantic', rerank_query: 'Sleeping bag rated to minus ten degrees.' } }, FIVE);
    expect(ranked[0][0]).toBe('e');
    expect(ranked[0][1]).toBeCloseTo(1, 5);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i][1]).toBeLessThanOrEqual(ranked[i - 1][1]);
  });

  it('reranks with the query when no rerank query is given', async () => {
    // The query is "kayak tent": a (tent), b and c (kayak) match it; d and e do not.
    const ranked = await rank({ use_weights: false, sort_by: { rerank_type: 'fulltext' } }, [
      ['e', 1],
      ['d', 0.9],
      ['a', 0.8],
    ]);
    expect(order(ranked)).toEqual(['a', 'e', 'd']);
  });

  it('refuses a type the dataset disables', async () => {
    const noBm25 = await service.newDataset(orgId, 'no bm25', { BM25_ENABLED: false });
    await refused(rank({ sort_by: { rerank_type: 'bm25' } }, [], noBm25), /rerank_type: bm25 search is disabled.*BM25_ENABLED/);
    await refused(() => rankingWindow(payload({ sort_by: { rerank_type: 'bm25' } }), 10, noBm25), /BM25_ENABLED/);
  });
});

describe('cross-encoder', () => {
  const withReranker = () => dataset;

  it("reorders by the reranker's scores of the chunks' text, and reranks hybrid search by itself", async () => {
    reranker.reset();
    reranker.score = (_query, text) => (text.includes('stove') ? 10 : text.includes('Sleeping') ? 5 : 0);
    const ranked = await rank({ use_weights: false, sort_by: { rerank_type: 'cross_encoder', rerank_query: 'warm camping' } }, FIVE, withReranker());
    expect(ranked).toEqual([
      ['d', 10],
      ['e', 5],
      ['a', 0],
      ['b', 0],
      ['c', 0],
    ]);
    expect(reranker.requests).toHaveLength(1);
    expect(reranker.requests[0].body).toEqual({ query: 'warm camping', texts: expect.any(Array), truncate: true });
    expect(reranker.requests[0].body.texts).toHaveLength(5);
    expect(reranker.requests[0].body.texts![0]).toBe('Alpine tent for four people, waterproof and light.');
    // Hybrid search on this dataset: the reranker decides, with the search's query.
    reranker.requests.length = 0;
    expect(order(await rank(null, FIVE, withReranker(), { search_type: 'hybrid' }))).toEqual(['d', 'e', 'a', 'b', 'c']);
    expect(reranker.requests[0].body.query).toBe('kayak tent');
    // Not on another search type, nor on a dataset without a reranker.
    expect(await rank(null, FIVE, withReranker())).toEqual(FIVE);
    expect(await rank(null, FIVE, plain, { search_type: 'hybrid' })).toEqual(FIVE);
  });

  it('refuses cross_encoder on a dataset without a reranker', async () => {
    await refused(rank({ sort_by: { rerank_type: 'cross_encoder' } }, FIVE, plain), /cross_encoder.*RERANKER_BASE_URL/);
  });

  it('fails with a 400 naming the endpoint when the reranker fails, never another order', async () => {
    reranker.reset();
    reranker.answer = { status: 401, body: { error: 'bad key' } };
    await refused(
      rank({ sort_by: { rerank_type: 'cross_encoder' } }, FIVE, withReranker()),
      new RegExp(`cross_encoder: reranker endpoint ${reranker.baseUrl}/rerank answered 401`),
    );
    expect(reranker.requests).toHaveLength(1); // not retried: a 401 will not pass
    reranker.answer = { status: 200, body: [{ index: 0, score: 1 }] };
    await refused(rank({ sort_by: { rerank_type: 'cross_encoder' } }, FIVE, withReranker()), /scored 1 of the 5 texts/);
    reranker.reset();
  });
});

describe('the reranker seam', () => {
  it("batches by 20, answers in the texts' order, and speaks TEI without a model name", async () => {
    reranker.reset();
    reranker.score = (_q, text) => Number(text);
    const texts = Array.from({ length: 45 }, (_, i) => String(i));
    const operator = { ...localStandIns, reranker: { baseUrl: reranker.baseUrl, apiKey: 'secret' } };
    const scores = await new HttpReranker({ baseUrl: reranker.baseUrl + '/', outbound: operator }).rerank('q', texts);
    expect(scores).toEqual(texts.map(Number));
    expect(reranker.requests.map((r) => r.body.texts!.length).sort((x, y) => x - y)).toEqual([5, 20, 20]);
    expect(reranker.requests.every((r) => r.path === '/rerank' && r.authorization === 'Bearer secret')).toBe(true);
  });

  it('speaks the Cohere shape with a model name', async () => {
    reranker.reset();
    const scores = await new HttpReranker({ baseUrl: reranker.baseUrl, model: 'rerank-v3', outbound: localStandIns }).rerank('kayak seats', [
      'a kayak',
      'kayak seats',
      'tent',
    ]);
    expect(scores).toEqual([1, 2, 0]);
    expect(reranker.requests[0].body).toEqual({ model: 'rerank-v3', query: 'kayak seats', documents: ['a kayak', 'kayak seats', 'tent'] });
  });

  it('retries server errors, then names the endpoint', async () => {
    reranker.reset();
    reranker.failNext(2, 503);
    const seam = new HttpReranker({ baseUrl: reranker.baseUrl, retries: 2, retryDelayMs: 10, outbound: localStandIns });
    expect(await seam.rerank('kayak', ['kayak'])).toEqual([1]);
    expect(reranker.requests).toHaveLength(3);
    reranker.failNext(3, 500);
    await expect(seam.rerank('kayak', ['kayak'])).rejects.toThrow(new RerankerError(`reranker endpoint ${reranker.baseUrl}/rerank answered 500`));
    const nowhere = new HttpReranker({ baseUrl: 'http://127.0.0.1:9', retries: 0, outbound: localStandIns });
    await expect(nowhere.rerank('kayak', ['kayak'])).rejects.toThrow(/reranker endpoint http:\/\/127\.0\.0\.1:9\/rerank did not answer/);
    reranker.reset();
  });

  it('refuses answers that do not score every text exactly once', async () => {
    const seam = new HttpReranker({ baseUrl: reranker.baseUrl, retries: 0, outbound: localStandIns });
    for (const [body, message] of [
      [
        {
          results: [
            { index: 0, relevance_score: 1 },
            { index: 0, relevance_score: 2 },
          ],
        },
        /scored text 0 twice/,
      ],
      [[{ index: 2, score: 1 }], /an index that is not one of the 2 texts sent/],
      [
        [
          { index: 0, score: 'high' },
          { index: 1, score: 1 },
        ],
        /a score for text 0 that is not a finite number/,
      ],
      [{ scores: [1, 2] }, /answered neither/],
    ] as const) {
      reranker.answer = { status: 200, body };
      await expect(seam.rerank('q', ['x', 'y'])).rejects.toThrow(message);
    }
    reranker.reset();
  });
});

describe('window and validation', () => {
  it('needs no window when nothing changes the order', () => {
    expect(rankingWindow(payload(null), 10)).toBeNull();
    expect(rankingWindow(payload({ use_weights: false }), 10)).toBeNull();
    expect(rankingWindow(payload({ use_weights: false, mmr: { use_mmr: false } }), 10)).toBeNull();
  });

  it('ranks prefetch_amount candidates, 1000 by default for sorts, 100 otherwise, never fewer than the page needs', () => {
    expect(rankingWindow(payload({ sort_by: { field: 'num_value' } }), 10)).toBe(1000);
    expect(rankingWindow(payload({ sort_by: { field: 'num_value', prefetch_amount: 30 } }), 10)).toBe(30);
    expect(rankingWindow(payload({ sort_by: { field: 'num_value', prefetch_amount: 30 } }), 50)).toBe(50);
    expect(rankingWindow(payload({ sort_by: { rerank_type: 'fulltext' } }), 10)).toBe(1000);
    expect(rankingWindow(payload({ sort_by: { rerank_type: 'cross_encoder' } }), 10)).toBe(100);
    expect(rankingWindow(payload({ recency_bias: 1 }), 10)).toBe(100);
    expect(rankingWindow(payload({}), 250)).toBe(250);
    expect(rankingWindow(payload({ sort_by: { field: 'weight', prefetch_amount: 10 ** 9 } }), 10, dataset)).toBe(10_000);
    // Hybrid search may be reranked by the dataset's reranker: with the dataset, the window is known.
    expect(rankingWindow(payload(null, { search_type: 'hybrid' }), 10, plain)).toBeNull();
    expect(rankingWindow(payload(null, { search_type: 'hybrid' }), 10, dataset)).toBe(100);
    expect(rankingWindow(payload(null, { search_type: 'hybrid' }), 10)).toBe(100);
  });

  it.each([
    [{ recency_bias: -1 }, /sort_options\.recency_bias: must be a number, 0 or more/],
    [{ location_bias: { location: AMSTERDAM, bias: -0.5 } }, /sort_options\.location_bias\.bias: must be a number, 0 or more/],
    [{ location_bias: { location: { lat: 91, lon: 0 }, bias: 1 } }, /location_bias\.location\.lat/],
    [{ tag_weights: { sale: -2 } }, /sort_options\.tag_weights\.sale: must be a number, 0 or more/],
    [{ mmr: { use_mmr: true, mmr_lambda: 1.5 } }, /sort_options\.mmr\.mmr_lambda: must be between 0 and 1/],
    [{ mmr: { use_mmr: true, mmr_lambda: -0.1 } }, /mmr_lambda/],
    [{ sort_by: { field: 'colour' } }, /sort_options\.sort_by\.field: must be one of num_value, time_stamp, created_at, weight/],
    [{ sort_by: { field: 'weight', direction: 'up' } }, /sort_options\.sort_by\.direction/],
    [{ sort_by: { rerank_type: 'magic' } }, /sort_options\.sort_by\.rerank_type: must be one of/],
    [{ sort_by: { rerank_type: 'fulltext', rerank_query: '  ' } }, /rerank_query: must be a non-empty text/],
    [{ sort_by: { field: 'weight', rerank_type: 'semantic' } }, /field .* or rerank_type .* not both/],
    [{ sort_by: { field: 'weight', prefetch_amount: -1 } }, /prefetch_amount: must be a whole number/],
    [{ sort_by: { field: 'num_value' }, mmr: { use_mmr: true } }, /sort_options\.sort_by \(field num_value\) and sort_options\.mmr cannot both apply/],
    [{ sort_by: { field: 'time_stamp' }, recency_bias: 1 }, /sort_options\.sort_by \(field time_stamp\) and sort_options\.recency_bias/],
    [{ sort_by: { field: 'weight' }, tag_weights: { sale: 2 } }, /sort_options\.sort_by \(field weight\) and sort_options\.tag_weights/],
    [{ sort_by: { field: 'weight' }, use_weights: true }, /and sort_options\.use_weights/],
    [{ sort_by: { field: 'weight' }, location_bias: { location: AMSTERDAM, bias: 1 } }, /and sort_options\.location_bias/],
  ])('refuses %j with 400 naming the field', async (sortOptions, message) => {
    await refused(() => rankingWindow(payload(sortOptions as T.SortOptions), 10), message);
  });

  it('accepts what does not conflict with a field sort', () => {
    expect(planRanking(payload({ sort_by: { field: 'weight' }, use_weights: false, recency_bias: 0, mmr: { use_mmr: false } }))?.order).toEqual({
      kind: 'field',
      field: 'weight',
      direction: 'desc',
    });
  });
});
