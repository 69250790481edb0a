// BM25's walk of the held postings (search/retrieval/bm25/topK.ts) alone, in this process: the
// search suite's corpus and queries in the service's in-memory index (memory.ts), its terms made by
// a close copy of PostgreSQL's English analysis (text/englishTerms.ts, applied word by word), and
// the top 10 and top 100 of each query on one thread, as bm25 and hybrid search ask for them.
// Pages are checked against the index's scoring of every posting. The service is not involved; it
// tells a change to the walk from the noise of a whole request.
//
//   npx tsx bench/bm25-walk.ts [chunks=1000000] [rounds=3]
import { innerText } from '../server/domain/chunks/content.js';
import { DatasetIndex } from '../server/search/retrieval/bm25/memory.js';
import { idf } from '../server/search/retrieval/termWeights.js';
import { englishTerms } from '../server/text/englishTerms.js';
import { generateCorpus } from './corpus.js';
import { queriesFrom } from './search.js';

const chunks = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 3);
const QUERIES = 200;

const started = performance.now();
const corpus = generateCorpus({ count: chunks, seed: 42 });
const queries = queriesFrom(corpus, QUERIES, 42 + 1000);

// The service's in-memory index, each chunk added as the service adds one.
const index = new DatasetIndex();
const stems = new Map<string, string | null>();
const termOf = (word: string): string | null => {
  let term = stems.get(word);
  if (term === undefined) {
    term = englishTerms(word)?.[0] ?? null;
    stems.set(word, term);
  }
  return term;
};
corpus.forEach((chunk, ordinal) => {
  const counts = new Map<string, number>();
  for (const word of innerText(chunk.chunk_html ?? '').match(/[A-Za-z]+/g) ?? []) {
    const term = termOf(word.toLowerCase());
    if (term) counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  const tfs = [...counts.values()];
  const id = `00000000-0000-4000-8000-${ordinal.toString(16).padStart(12, '0')}`;
  index.add({ id, length: tfs.reduce((a, b) => a + b, 0), terms: [...counts.keys()], tfs, tags: [] });
});
corpus.length = 0;
const parameters = { k1: 1.2, b: 0.75, averageLength: index.lengthSum / index.chunks };
console.log(`${chunks} chunks, average length ${parameters.averageLength.toFixed(1)}: built in ${((performance.now() - started) / 1000).toFixed(0)} s`);

const walks = queries.map((query) => {
  const terms = englishTerms(query) ?? [];
  return { terms, weights: terms.map((t) => idf(chunks, index.holding(t))) };
});
/** The walk's page (topK.ts, on this thread). */
const top = (i: number, k: number, least = 0) => index.top(walks[i].terms, walks[i].weights, parameters, k, least);
/** Every posting scored: the page the walk must give. */
const exhaustive = (i: number, k: number) => index.best(index.match(walks[i].terms, walks[i].weights, parameters), k, 0);

/** p50, p90 and p99 in ms of the walks, one after another. */
function timed(walk: (i: number) => void): string {
  const times = walks.map((_, i) => {
    const at = performance.now();
    walk(i);
    return performance.now() - at;
  });
  times.sort((a, b) => a - b);
  const ms = (q: number) => times[Math.floor(q * (times.length - 1))].toFixed(3);
  return `p50 ${ms(0.5)} ms, p90 ${ms(0.9)}, p99 ${ms(0.99)}`;
}

for (const k of [10, 100]) {
  let wrong = 0;
  for (let i = 0; i < 20; i++) {
    const [got, want] = [top(i, k), exhaustive(i, k)];
    if (got.length !== want.length || got.some((r, j) => r.ordinal !== want[j].ordinal || r.score !== want[j].score)) wrong++;
  }
  // The walk again from the page's own floor (the k-th score, less a hair): what no floor known
  // earlier could save.
  const floors = walks.map((_, i) => exhaustive(i, k)[k - 1]?.score * (1 - 1e-12) || 0);
  // Round 0 warms the compiled code.
  for (let round = 0; round <= rounds; round++) {
    const walked = timed((i) => top(i, k));
    const fromFloor = timed((i) => top(i, k, floors[i]));
    if (round > 0)
      console.log(`top ${k}, round ${round}: ${walked}; from the page's floor ${fromFloor}; ${wrong} of 20 pages differ from scoring every posting`);
  }
}
