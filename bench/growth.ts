// How search latency grows with the corpus: the search suite run at several sizes in one invocation
// (`--chunks 100000,1000000`), each variant's p50 at every size, and the largest size's over the
// smallest's. Both sizes in one run on the same code: the p50 of one size moves by up to 1.5×
// between runs of one day, so a ratio against a figure from another run says little. Each p50 is
// also split into retrieve()'s (the service's retrieval in-process) and the rest of the request, to
// show which part grows.
import { fmt, table } from './report.js';
import { goalLatency, type SearchResult, type VariantResult } from './search.js';

/** The growth goal: p50 at ten times the chunks at most twice the p50. */
const GOAL = { sizeTimes: 10, p50Times: 2 };

export interface GrowthRow {
  /** The variant's name at each size (the ~12 % tag may differ between corpora). */
  names: string[];
  /** p50 in ms at each size: API latency less the query's embedding, the last pass's. */
  p50_ms: (number | null)[];
  /** retrieve()'s p50 in ms at each size, less the query's embedding as the API's is. */
  retrieve_ms: (number | null)[];
  /** p50 at the largest size over p50 at the smallest. */
  ratio: number | null;
  /** Whether the ratio meets the goal; null unless the largest size is ten times the smallest. */
  met: boolean | null;
}

export interface Growth {
  chunks: number[];
  rows: GrowthRow[];
}

/** The variants a run's figures were last measured on (after ANALYZE where the run made one). */
const lastPass = (r: SearchResult): VariantResult[] => r.after_analyze?.variants ?? r.variants;

/** The p50 the goals are checked on (goalLatency); null for a variant not measured. */
const p50Of = (v: VariantResult | undefined): number | null => (v?.available && v.latency_ms ? goalLatency(v).p50 : null);

/** retrieve()'s p50, less the embedding where one is made; null for a variant not measured. */
const retrieveOf = (v: VariantResult | undefined): number | null =>
  v?.available && v.latency_ms ? ((v.retrieval_excluding_embedding_ms ?? v.latency_ms.retrieval)?.p50 ?? null) : null;

/** The growth of each variant over `runs` (one per size, smallest first); variants pair by position. */
export function growthOf(runs: { chunks: number; result: SearchResult }[]): Growth {
  const sorted = [...runs].sort((a, b) => a.chunks - b.chunks);
  const passes = sorted.map((r) => lastPass(r.result));
  const judged = sorted.length > 1 && sorted.at(-1)!.chunks === GOAL.sizeTimes * sorted[0].chunks;
  const rows = passes[0].map((_, i) => {
    const p50 = passes.map((variants) => p50Of(variants[i]));
    const [first, last] = [p50[0], p50.at(-1) ?? null];
    const ratio = first && last !== null ? Math.round((last / first) * 100) / 100 : null;
    return {
      names: passes.map((variants) => variants[i]?.name ?? '–'),
      p50_ms: p50,
      retrieve_ms: passes.map((variants) => retrieveOf(variants[i])),
      ratio,
      met: judged && ratio !== null ? ratio <= GOAL.p50Times : null,
    };
  });
  return { chunks: sorted.map((r) => r.chunks), rows };
}

export function formatGrowth(mode: string, growth: Growth): string {
  const sizes = growth.chunks.map((n) => fmt(n));
  const rows = growth.rows.map((row) => {
    const mark = row.met === null ? '' : row.met ? ' ✓' : ' ✗';
    const rest = row.p50_ms.map((p50, i) => (p50 !== null && row.retrieve_ms[i] !== null ? p50 - row.retrieve_ms[i]! : null));
    return [
      [...new Set(row.names)].join(' / '),
      ...row.p50_ms.map((x) => fmt(x, 2)),
      row.ratio === null ? '–' : `${fmt(row.ratio, 2)}×${mark}`,
      ...row.retrieve_ms.map((x) => fmt(x, 2)),
      ...rest.map((x) => fmt(x, 2)),
    ];
  });
  return [
    `search growth · ${mode} · ${sizes.join(' and ')} chunks in one run`,
    '',
    table([['search', ...sizes.map((s) => `p50 at ${s}`), 'ratio', ...sizes.map((s) => `retrieve() at ${s}`), ...sizes.map((s) => `rest at ${s}`)], ...rows]),
    '',
    `p50 in ms, API less the query's embedding. ratio: at the largest size over the smallest; the goal (≤ ${GOAL.p50Times}×) is checked when the largest is ${GOAL.sizeTimes}× the smallest.`,
    "retrieve(): the service's retrieval in-process, its p50 less the embedding; rest: the API's p50 less retrieve()'s (HTTP, auth, the page's rows, highlights, JSON).",
  ].join('\n');
}
