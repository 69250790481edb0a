// The search suite's growth table (bench/growth.ts): each variant's p50 at every size, paired by
// position (a tag may differ between corpora), less the embedding where one is made, from the last
// pass; the goal judged only when the largest size is ten times the smallest.
import { describe, expect, it } from 'vitest';
import { formatGrowth, growthOf } from '../../bench/growth.js';
import type { SearchResult, VariantResult } from '../../bench/search.js';

const latency = (p50: number) => ({ p50, p90: p50, p99: p50, mean: p50, max: p50 });

function variant(name: string, api: number, lessEmbedding: number | null = null, retrieval: number | null = null): VariantResult {
  return {
    name,
    search_type: 'semantic',
    filter: null,
    available: true,
    latency_ms: { api: latency(api), retrieval: retrieval === null ? null : latency(retrieval), raw: null },
    api_excluding_embedding_ms: lessEmbedding === null ? null : latency(lessEmbedding),
  };
}

/** The cells of the table's row for `name`. */
const cellsOf = (text: string, name: string) =>
  text
    .split('\n')
    .find((line) => line.startsWith(name))
    ?.trim()
    .split(/\s+/);

const run = (chunks: number, variants: VariantResult[], analyzed: VariantResult[] | null = null) => ({
  chunks,
  result: { variants, after_analyze: analyzed && { variants: analyzed } } as unknown as SearchResult,
});

describe('search growth', () => {
  it('divides the largest size p50 by the smallest, judged at ten times the chunks', () => {
    const growth = growthOf([
      run(1_000_000, [variant('hybrid', 9, 7.2), variant('bm25', 3), variant('semantic, tag security', 6)]),
      run(100_000, [variant('hybrid', 4, 3), variant('bm25', 1.6), variant('semantic, tag account', 3.2)]),
    ]);
    expect(growth.chunks).toEqual([100_000, 1_000_000]);
    expect(growth.rows.map((r) => [r.p50_ms, r.ratio, r.met])).toEqual([
      [[3, 7.2], 2.4, false],
      [[1.6, 3], 1.88, true],
      [[3.2, 6], 1.88, true],
    ]);
    expect(growth.rows[2].names).toEqual(['semantic, tag account', 'semantic, tag security']);
    const text = formatGrowth('full', growth);
    expect(text).toContain('2.40× ✗');
    expect(text).toContain('semantic, tag account / semantic, tag security');
  });

  it('reads the pass after ANALYZE where a run made one, and judges nothing but ten times the chunks', () => {
    const growth = growthOf([run(20_000, [variant('bm25', 5)], [variant('bm25', 2)]), run(5_000, [variant('bm25', 1)])]);
    expect(growth.rows[0]).toMatchObject({ p50_ms: [1, 2], ratio: 2, met: null });
    expect(formatGrowth('embedded', growth)).not.toMatch(/[✓✗]/);
  });

  it("splits each p50 into retrieve()'s and the rest, both less the embedding", () => {
    const hybrid = (api: number, lessEmbedding: number, retrieval: number, retrievalLessEmbedding: number) => ({
      ...variant('hybrid', api, lessEmbedding, retrieval),
      retrieval_excluding_embedding_ms: latency(retrievalLessEmbedding),
    });
    const growth = growthOf([
      run(100_000, [hybrid(3.5, 3, 1.5, 1.25), variant('bm25', 1.6, null, 0.4)]),
      run(1_000_000, [hybrid(7.5, 7, 5.5, 5), variant('bm25', 3)]),
    ]);
    expect(growth.rows.map((r) => r.retrieve_ms)).toEqual([
      [1.25, 5],
      [0.4, null],
    ]);
    const text = formatGrowth('full', growth);
    expect(cellsOf(text, 'hybrid')).toEqual(['hybrid', '3.00', '7.00', '2.33×', '✗', '1.25', '5.00', '1.75', '2.00']);
    expect(cellsOf(text, 'bm25')).toEqual(['bm25', '1.60', '3.00', '1.88×', '✓', '0.40', '–', '1.20', '–']);
  });
});
