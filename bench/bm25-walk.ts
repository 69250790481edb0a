// BM25's walk of the held postings (search/retrieval/bm25/topK.ts) alone, in this process: the
// search suite's corpus and queries, the postings made by a close copy of PostgreSQL's English
// analysis (text/englishTerms.ts, applied word by word), and the top 10 and top 100 of each query
// on one thread, as bm25 and hybrid search ask for them. Every page is checked against scoring
// every posting. The service is not involved; it tells a change to the walk from the noise of a
// whole request.
//
//   npx tsx bench/bm25-walk.ts [chunks=1000000] [rounds=3]
import { ID_WORDS, writeIdWords } from '../server/search/chunkIdWords.js';
import { innerText } from '../server/domain/chunks/content.js';
import { PostingList } from '../server/search/retrieval/bm25/postingList.js';
import { BestK, type Ranked, topK } from '../server/search/retrieval/bm25/topK.js';
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

// Postings by term, in ordinal order; each chunk's length in terms.
const lengths = new Int32Array(chunks);
const building = new Map<string, { ordinals: number[]; tfs: number[] }>();
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
  for (const [term, tf] of counts) {
    let list = building.get(term);
    if (!list) building.set(term, (list = { ordinals: [], tfs: [] }));
    list.ordinals.push(ordinal);
    list.tfs.push(tf);
    lengths[ordinal] += tf;
  }
});
corpus.length = 0;
const lists = new Map<string, PostingList>();
for (const [term, { ordinals, tfs }] of building) lists.set(term, PostingList.over(Int32Array.from(ordinals), Uint16Array.from(tfs), lengths));
building.clear();

const idWords = new Int32Array(chunks * ID_WORDS);
for (let i = 0; i < chunks; i++) writeIdWords(`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, idWords, i * ID_WORDS);
const table = { idWords, skipped: new Uint8Array(chunks), lengths };
const averageLength = lengths.reduce((a, b) => a + b, 0) / chunks;
const parameters = { k1: 1.2, b: 0.75, averageLength };
console.log(
  `${chunks} chunks, ${lists.size} terms, average length ${averageLength.toFixed(1)}: built in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);

const walks = queries.map((query) => {
  const terms = englishTerms(query) ?? [];
  const held = terms.map((t) => lists.get(t) ?? null);
  return { lists: held, weights: held.map((l) => idf(chunks, l?.size ?? 0)), chunks: table, parameters, least: 0 };
});

/** Every posting scored: the page the walk must give. */
function exhaustive(walk: (typeof walks)[number], k: number): Ranked[] {
  const scores = new Float64Array(chunks);
  walk.lists.forEach((list, t) => {
    if (!list) return;
    for (let j = 0; j < list.size; j++) {
      const d = list.ordinals[j];
      const norm = parameters.k1 * (1 - parameters.b + (parameters.b * lengths[d]) / averageLength);
      scores[d] += (walk.weights[t] * list.tfs[j] * (parameters.k1 + 1)) / (list.tfs[j] + norm);
    }
  });
  const best = new BestK(k, idWords);
  scores.forEach((score, d) => {
    if (score > 0) best.offer(d, score);
  });
  return best.ranked();
}

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
  for (const walk of walks.slice(0, 20)) {
    const [got, want] = [topK({ ...walk, k }), exhaustive(walk, k)];
    if (got.length !== want.length || got.some((r, i) => r.ordinal !== want[i].ordinal || r.score !== want[i].score)) wrong++;
  }
  // The walk again from the page's own floor (the k-th score, less a hair): what no floor known
  // earlier could save.
  const floors = walks.map((walk) => exhaustive(walk, k)[k - 1]?.score * (1 - 1e-12) || 0);
  // Round 0 warms the compiled code.
  for (let round = 0; round <= rounds; round++) {
    const walked = timed((i) => topK({ ...walks[i], k }));
    const fromFloor = timed((i) => topK({ ...walks[i], k, least: floors[i] }));
    if (round > 0)
      console.log(`top ${k}, round ${round}: ${walked}; from the page's floor ${fromFloor}; ${wrong} of 20 pages differ from scoring every posting`);
  }
}
