// Recall of the held vectors' candidates (search/retrieval/vectors) against exact search: first a
// scan of the int8 codes by column (columns.js, as the service scans for a query with few nonzero
// components), then the graph by how many candidates a search takes from it. The search suite's
// corpus and queries, embedded by the built-in (hashing) embedder; the codes and a usearch index
// made as the service makes them, in this process; the service is not involved.
//
//   npx tsx bench/held-sweep.ts [chunks=100000] [candidates,…=100,384,1000,2000,4000 | none]
//
// Prints per way of finding candidates the mean recall@10 over 200 queries (the candidates ranked
// by exact distance, as the service ranks them) and the p50 of finding + ranking; `none` skips
// the graph (minutes to build at a million chunks).
import usearch from 'usearch';
import { innerText } from '../server/domain/chunks/content.js';
import { BuiltinEmbedder } from '../server/engines/embeddings/builtin.js';
import { ColumnCodes } from '../server/search/retrieval/vectors/columns.js';
import { GRAPH } from '../server/search/retrieval/vectors/index.js';
import { generateCorpus } from './corpus.js';
import { queriesFrom } from './search.js';

const chunks = Number(process.argv[2] ?? 100_000);
const candidateArg = process.argv[3] ?? '100,384,1000,2000,4000';
const candidateCounts = candidateArg === 'none' ? [] : candidateArg.split(',').map(Number);
/** Candidates a scan takes (the service's least, MIN_CANDIDATES). */
const SCANNED = 100;
const D = 384;
const K = 10;
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

const embedder = new BuiltinEmbedder(D);
const corpus = generateCorpus({ count: chunks, seed: 42 });
const vectors = new Float32Array(chunks * D);
for (let i = 0; i < chunks; i++) vectors.set((await embedder.embed([innerText(corpus[i].chunk_html ?? '')]))[0], i * D);
const queries = (await embedder.embed(queriesFrom(corpus, 200, 42 + 1000))).map((v) => Float32Array.from(v));

/** Cosine distance of query `q` to chunk `i`. */
function distance(q: Float32Array, i: number): number {
  let dot = 0;
  let qq = 0;
  let vv = 0;
  for (let j = 0; j < D; j++) {
    const x = vectors[i * D + j];
    dot += q[j] * x;
    qq += q[j] * q[j];
    vv += x * x;
  }
  return 1 - dot / Math.sqrt(qq * vv);
}

let started = performance.now();
const truth = queries.map((q) => {
  const distances = Float64Array.from({ length: chunks }, (_, i) => distance(q, i));
  const order = Array.from({ length: chunks }, (_, i) => i).sort((a, b) => distances[a] - distances[b]);
  return { top: new Set(order.slice(0, K)), distances };
});
console.log(`${chunks} chunks; exact top ${K} of ${queries.length} queries in ${seconds(started)} s`);

/** Recall@K and the p50 of `find` plus the exact ranking of what it finds, over the queries. */
function measure(find: (q: Float32Array) => ArrayLike<number>): string {
  let recall = 0;
  const times: number[] = [];
  queries.forEach((q, n) => {
    const start = performance.now();
    const best = Array.from(find(q))
      .sort((a, b) => truth[n].distances[a] - truth[n].distances[b])
      .slice(0, K);
    times.push(performance.now() - start);
    recall += best.filter((i) => truth[n].top.has(i)).length / K;
  });
  times.sort((a, b) => a - b);
  return `recall@${K} ${(recall / queries.length).toFixed(3)}, p50 ${times[times.length >> 1].toFixed(2)} ms`;
}

/** Each component of the vector's direction in int8 steps, as the vectors' worker encodes its codes. */
function codesOf(v: Float32Array, at: number, into: Int8Array, to: number): void {
  let norm = 0;
  for (let j = 0; j < D; j++) norm += v[at + j] ** 2;
  const scale = norm > 0 ? 127 / Math.sqrt(norm) : 0;
  for (let j = 0; j < D; j++) into[to + j] = Math.round(v[at + j] * scale);
}

const columns = new ColumnCodes(D, 65_536);
const row = new Int8Array(D);
for (let i = 0; i < chunks; i++) {
  codesOf(vectors, i * D, row, 0);
  columns.write(i, row, 0);
}
console.log(
  `scan by column, ${SCANNED} candidates: ${measure((q) => {
    const codes = new Int8Array(D);
    codesOf(q, 0, codes, 0);
    return columns.best(codes, SCANNED, chunks);
  })}`,
);
if (candidateCounts.length === 0) process.exit(0);

const graph = new usearch.Index({
  dimensions: D,
  metric: 'cos' as never,
  quantization: 'i8' as never,
  connectivity: GRAPH.connectivity,
  expansion_add: GRAPH.expansionAdd,
  expansion_search: GRAPH.expansionSearch,
  multi: false,
});
started = performance.now();
graph.add(
  BigUint64Array.from({ length: chunks }, (_, i) => BigInt(i)),
  vectors,
  0,
);
console.log(`graph (${JSON.stringify(GRAPH)}) built in ${seconds(started)} s`);

for (const candidates of candidateCounts) {
  console.log(`graph, ${candidates} candidates: ${measure((q) => Array.from(graph.search(q, candidates, 1).keys, Number))}`);
}
