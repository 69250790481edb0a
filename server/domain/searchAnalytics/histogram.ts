// Latency percentiles, estimated from a histogram of log-scale buckets: bucket b holds latencies in
// [0.1 ms · 1.12^b, 0.1 ms · 1.12^(b+1)), bucket 0 everything below 0.112 ms and the last one
// everything above. The database bins latencies with the same rule (search_latency_bucket, migration
// 029), in its daily roll-ups and in ad-hoc counts, so a percentile costs the same whatever the
// number of searches, and is within about 6 % of the exact one. No I/O here.

export const HISTOGRAM_BUCKETS = 128;
const LOWEST = 0.1;
const RATIO = 1.12;

/**
 * The q-quantile (0 to 1) of the latencies counted in `counts` (index = bucket), interpolated
 * between the two nearest latencies as percentile_cont does; 0 without any.
 */
export function percentile(counts: readonly number[], q: number): number {
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return 0;
  const rank = q * (total - 1);
  const below = Math.floor(rank);
  const low = nthLatency(counts, below);
  return below === rank ? low : low + (rank - below) * (nthLatency(counts, below + 1) - low);
}

/** The estimate of the k-th smallest latency (from 0): the latencies of a bucket taken as spread evenly over it, on the log scale. */
function nthLatency(counts: readonly number[], k: number): number {
  let before = 0;
  for (let b = 0; b < counts.length; b++) {
    const n = counts[b];
    if (k < before + n) {
      const within = (k - before + 0.5) / n;
      return b === 0 ? LOWEST * RATIO * within : LOWEST * RATIO ** (b + within);
    }
    before += n;
  }
  return LOWEST * RATIO ** counts.length;
}
