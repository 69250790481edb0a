// The held vectors' scan by column (search/retrieval/vectors/columns.js) alone, in this process: how
// long it takes to find the top 100 and 200 of N unit vectors (semantic search's candidates, and
// hybrid's once blocks are sealed) for queries with few nonzero components: 200 queries in turn
// (each reads its columns from memory), then one query again and again (its columns stay in cache
// where they fit: at 100,000 vectors, some 2 MB). The gap says whether the scan waits on memory or
// on arithmetic. The vectors are random (Gaussian) directions, coded as the vectors' worker codes
// them, in its blocks (all but the last sealed into 4-bit codes); the service is not involved.
//
//   npx tsx bench/column-scan.ts [chunks=1000000] [nonzero=24]
import { ColumnCodes } from '../server/search/retrieval/vectors/columns.js';

const chunks = Number(process.argv[2] ?? 1_000_000);
const nonzero = Number(process.argv[3] ?? 24);
const D = 384;
/** The worker's int8 steps of a unit vector's components (vectors/worker.js). */
const CODE_SCALE = 127;
/** Rows of a block, as the worker holds them (BLOCK in vectors/worker.js). */
const ROWS = 65_536;
const QUERIES = 200;

let seed = 1;
const uniform = () => {
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) & 0x7fffffff;
  return (seed + 1) / 0x80000000;
};
const gaussian = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());

/** The codes of a random direction whose components are nonzero at `at` only (all: every one). */
function codesOf(at: number[] | null): Int8Array {
  const v = new Float64Array(D);
  for (const c of at ?? v.keys()) v[c] = gaussian();
  const norm = Math.hypot(...v);
  return Int8Array.from(v, (x) => Math.round((x / norm) * CODE_SCALE));
}

const columns = new ColumnCodes(D, ROWS);
for (let slot = 0; slot < chunks; slot++) columns.write(slot, codesOf(null), 0);
const queries = Array.from({ length: QUERIES }, () => codesOf(Array.from({ length: nonzero }, () => Math.floor(uniform() * D))));
/** Mean nonzero components of the queries. */
const componentsOf = (order: Int8Array[]) => order.reduce((sum, q) => sum + q.filter((x) => x !== 0).length, 0) / order.length;

/** p50 in ms of scanning for `order`'s queries, one after another, for the best `top`. */
function p50(order: Int8Array[], top: number): number {
  const times = order.map((query) => {
    const started = performance.now();
    columns.best(query, top, chunks, false);
    return performance.now() - started;
  });
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

for (const top of [100, 200]) {
  for (const [name, order] of [
    ['200 queries in turn', queries],
    ['one query again', queries.map(() => queries[0])],
  ] as const) {
    p50(order, top); // warm-up: compiled code, and for the cached case its columns
    const ms = p50(order, top);
    const components = componentsOf(order);
    console.log(
      `${chunks} vectors (${columns.estimates ? 'sealed blocks' : 'one open block'}), top ${top}, ${name} (${components.toFixed(1)} nonzero components): p50 ${ms.toFixed(3)} ms, ${((ms * 1e6) / chunks / components).toFixed(3)} ns per row and column`,
    );
  }
}
