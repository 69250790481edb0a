// The ingestion suite: the same corpus written (1) through the service's HTTP API in batches, with 1
// and with N concurrent requests, and (2) straight into the engines with their bulk paths, doing the
// same derived work (inner text, embeddings, vector rows under the dataset's HNSW index, lexical
// entries). Figures: chunks/s over the whole run, API/raw ratio, batch latency, CPU and memory.
import http from 'node:http';
import type { Knex } from 'knex';
import { createClient, type Client } from '../sdk/src/generated/client/index.js';
import { createDataset, createOrganization } from '../sdk/src/generated/sdk.gen.js';
import type { ChunkReqPayload } from '../sdk/src/generated/types.gen.js';
import { loadConfig, type Config } from '../server/config.js';
import { startService, type RunningService } from '../server/main.js';
import { ensureVectorIndex, needsVectorIndex, type DistanceMetric } from '../server/store/vectors.js';
import { type BulkDataset, BulkWriter, type BulkSteps, type RawLexical, rawLexical } from './bulk.js';
import { corpusStats, generateCorpus } from './corpus.js';
import { PhaseProfiler } from './cpuprof.js';
import { Instrument, type ProfileSnapshot } from './instrument.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { cpuDelta, descendantCpu } from './procs.js';
import { fmt, mean, percentile, RssSampler, stopwatch, table } from './report.js';

export interface IngestOptions {
  chunks: number;
  /** Chunks per API request (the API accepts at most 120). */
  batch: number;
  /** Rows per bulk statement / import on the raw path. */
  rawBatch: number;
  /** Concurrent API requests, one run each. */
  concurrency: number[];
  /** Chunks written (API and raw) before measuring, into datasets of their own; reported apart. */
  warmup: number;
  seed: number;
  /** Timers around the service's seams (see instrument.ts); adds a breakdown to each API run. */
  profile: boolean;
  /** A V8 CPU profile of each measured phase (see cpuprof.ts). */
  cpuProfile: boolean;
}

interface Dataset extends BulkDataset {
  organizationId: string;
}

interface Counts {
  chunks: number;
  vectors: number;
  lexical: number;
}

interface PhaseCost {
  wall_ms: number;
  chunks_per_s: number;
  node_cpu_ms: number;
  /** CPU of the engine processes (full mode), by process name. */
  engine_cpu_ms: Record<string, number>;
  peak_rss_mib: number;
}

export interface RawRun extends PhaseCost {
  batch: number;
  /** Time in each step, summed over the batches. */
  steps_ms: BulkSteps;
}

export interface ApiRun extends PhaseCost {
  concurrency: number;
  batch: number;
  requests: number;
  ratio_to_raw: number;
  latency_ms: { p50: number; p90: number; p99: number; mean: number; max: number; first_tenth_p50: number; last_tenth_p50: number };
  /** Every request's latency, in the order the requests were sent. */
  latencies_ms: number[];
  profile?: ProfileSnapshot;
}

export interface IngestResult {
  options: IngestOptions;
  corpus: ReturnType<typeof corpusStats>;
  engines: { store: string; lexical: string; workflows: string };
  service_start_ms: number;
  warmup: { chunks: number; api_ms: number; raw_ms: number } | null;
  raw: RawRun;
  api: ApiRun[];
  verification: { datasets: Record<string, Counts>; sampled_chunks: number };
  process_peak_rss_mib: number;
}

/** Everything a run needs: the service, an SDK client, the store and the raw lexical writer. */
interface Context {
  service: RunningService;
  config: Config;
  client: Client;
  db: Knex;
  lexical: RawLexical;
}

export async function runIngest(modeEnv: ModeEnvironment, options: IngestOptions, log: (line: string) => void): Promise<IngestResult> {
  if (options.batch < 1 || options.batch > 120) throw new Error(`--batch must be between 1 and 120 (the API's limit), got ${options.batch}`);
  const corpus = generateCorpus({ count: options.chunks, seed: options.seed });
  const warmCorpus = generateCorpus({ count: options.warmup, seed: options.seed + 1, prefix: 'warm' });
  // The client's share of the work (serialising the requests) is done before any clock starts.
  const bodies = batches(corpus, options.batch).map((b) => Buffer.from(JSON.stringify(b)));
  const warmBodies = batches(warmCorpus, options.batch).map((b) => Buffer.from(JSON.stringify(b)));

  const env = await modeEnv.freshEnv();
  const config = loadConfig(env);
  const started = stopwatch();
  const service = await startService(config);
  const serviceStartMs = started().wallMs;
  const ctx: Context = {
    service,
    config,
    client: createClient({ baseUrl: service.url, auth: () => ADMIN_KEY }),
    db: service.services.store.db,
    lexical: rawLexical(config, service.services.store.db),
  };
  const engines = { store: service.services.store.kind, lexical: service.services.lexical.kind, workflows: service.services.workflows.kind };
  log(`service on ${service.url} (${engines.store}, ${engines.lexical}, ${engines.workflows}) in ${fmt(serviceStartMs)} ms`);
  const rss = new RssSampler().start();
  const instrument = options.profile ? new Instrument() : null;
  const profiler = options.cpuProfile ? new PhaseProfiler(`ingest-${modeEnv.mode}`) : null;
  const profiles: string[] = [];
  try {
    let warmup: IngestResult['warmup'] = null;
    if (options.warmup > 0) {
      const api = await apiRun(ctx, await newDataset(ctx, 'warmup-api'), warmBodies, 1, rss);
      const raw = await rawRun(ctx, await newDataset(ctx, 'warmup-raw'), warmCorpus, options.rawBatch, rss);
      warmup = { chunks: options.warmup, api_ms: Math.round(api.wall_ms), raw_ms: Math.round(raw.wall_ms) };
      log(`warm-up: ${options.warmup} chunks, API ${fmt(api.wall_ms)} ms, raw ${fmt(raw.wall_ms)} ms (not counted)`);
    }
    instrument?.install(service);

    // Raw first: it gets the emptiest tables, which can only flatter it, never the API.
    const rawDataset = await newDataset(ctx, 'raw');
    instrument?.reset();
    await profiler?.start();
    const raw = await rawRun(ctx, rawDataset, corpus, options.rawBatch, rss);
    if (profiler) profiles.push(await profiler.stop('raw'));
    log(`raw engines: ${fmt(raw.chunks_per_s)} chunks/s`);

    const apiRuns: ApiRun[] = [];
    const apiDatasets: [string, Dataset][] = [];
    for (const concurrency of options.concurrency) {
      const dataset = await newDataset(ctx, `api-c${concurrency}`);
      instrument?.reset();
      await profiler?.start();
      const run = await apiRun(ctx, dataset, bodies, concurrency, rss);
      if (profiler) profiles.push(await profiler.stop(`api-c${concurrency}`));
      const full: ApiRun = { ...run, ratio_to_raw: run.chunks_per_s / raw.chunks_per_s, ...(instrument ? { profile: instrument.snapshot() } : {}) };
      apiRuns.push(full);
      apiDatasets.push([`api_c${concurrency}`, dataset]);
      log(
        `API ×${concurrency}: ${fmt(run.chunks_per_s)} chunks/s (${fmt(full.ratio_to_raw * 100)}% of raw), batch p50 ${fmt(run.latency_ms.p50)} ms, p99 ${fmt(run.latency_ms.p99)} ms`,
      );
    }
    instrument?.uninstall();

    const verification = await verify(ctx, options.chunks, ['raw', rawDataset], apiDatasets, corpus);
    if (profiles.length) log(`CPU profiles: ${profiles.join(', ')}`);
    log(`verified: every dataset holds ${options.chunks} chunks, vectors and lexical entries; ${verification.sampled_chunks} sampled chunks identical`);
    return {
      options,
      corpus: corpusStats(corpus),
      engines,
      service_start_ms: Math.round(serviceStartMs),
      warmup,
      raw,
      api: apiRuns,
      verification,
      process_peak_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  } finally {
    instrument?.uninstall();
    profiler?.close();
    rss.stop();
    await service.stop();
  }
}

function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The SDK's fetch may reuse a keep-alive connection the server has just timed out (after a long
 * phase without requests): set-up calls, which are not measured, retry once on a network error.
 */
async function once<T extends { response?: Response }>(call: () => Promise<T>): Promise<T> {
  try {
    const result = await call();
    if (result.response) return result;
  } catch {
    // fall through to the retry
  }
  return call();
}

/** An organization and a dataset in it, through the SDK, as a client would make them. */
async function newDataset(ctx: Context, name: string): Promise<Dataset> {
  const org = await once(() => createOrganization({ client: ctx.client, body: { name: `bench-${name}` } }));
  if (!org.data)
    throw new Error(`createOrganization answered ${org.response?.status}: ${String(org.error)} ${JSON.stringify(org.error)}`, { cause: org.error });
  const orgId = org.data.id;
  const ds = await once(() => createDataset({ client: ctx.client, headers: { 'SVC-Organization': orgId }, body: { dataset_name: `bench-${name}` } }));
  if (!ds.data) throw new Error(`createDataset answered ${ds.response?.status}: ${String(ds.error)} ${JSON.stringify(ds.error)}`, { cause: ds.error });
  const conf = ds.data.server_configuration;
  return {
    id: ds.data.id,
    organizationId: org.data.id,
    model: conf.EMBEDDING_MODEL_NAME ?? 'builtin',
    size: conf.EMBEDDING_SIZE ?? 384,
    metric: (conf.DISTANCE_METRIC ?? 'cosine') as DistanceMetric,
  };
}

// ---------------------------------------------------------------------------------------------
// Phase bookkeeping

function phase(rss: RssSampler) {
  rss.reset();
  const engines0 = descendantCpu();
  const clock = stopwatch();
  return (chunks: number): PhaseCost => {
    const { wallMs, cpuMs } = clock();
    return {
      wall_ms: wallMs,
      chunks_per_s: (chunks * 1000) / wallMs,
      node_cpu_ms: cpuMs,
      engine_cpu_ms: cpuDelta(engines0, descendantCpu()),
      peak_rss_mib: rss.peak(),
    };
  };
}

// ---------------------------------------------------------------------------------------------
// Through the API

const agentFor = (concurrency: number) => new http.Agent({ keepAlive: true, maxSockets: concurrency });

function post(agent: http.Agent, url: URL, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) } },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

async function apiRun(ctx: Context, dataset: Dataset, bodies: Buffer[], concurrency: number, rss: RssSampler): Promise<Omit<ApiRun, 'ratio_to_raw'>> {
  const url = new URL('/api/chunk', ctx.service.url);
  const headers = { authorization: ADMIN_KEY, 'svc-dataset': dataset.id };
  const agent = agentFor(concurrency);
  const latencies = new Array<number>(bodies.length);
  const sizes = bodies.map((b) => (JSON.parse(b.toString('utf8')) as unknown[]).length);
  const chunks = sizes.reduce((a, b) => a + b, 0);
  let next = 0;
  const end = phase(rss);
  const worker = async () => {
    while (next < bodies.length) {
      const i = next++;
      const t0 = performance.now();
      const { status, text } = await post(agent, url, headers, bodies[i]);
      latencies[i] = performance.now() - t0;
      if (status !== 200) throw new Error(`POST /api/chunk (batch ${i}) answered ${status}: ${text.slice(0, 500)}`);
      const stored = (JSON.parse(text) as { chunk_metadata: unknown[] }).chunk_metadata;
      if (stored.length !== sizes[i]) throw new Error(`POST /api/chunk (batch ${i}) returned ${stored.length} chunks for ${sizes[i]}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
  const cost = end(chunks);
  const tenth = Math.max(1, Math.floor(latencies.length / 10));
  return {
    ...cost,
    concurrency,
    batch: sizes[0] ?? 0,
    requests: bodies.length,
    latency_ms: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      mean: mean(latencies),
      max: Math.max(...latencies),
      first_tenth_p50: percentile(latencies.slice(0, tenth), 50),
      last_tenth_p50: percentile(latencies.slice(-tenth), 50),
    },
    latencies_ms: latencies.map((ms) => Math.round(ms * 10) / 10),
  };
}

// ---------------------------------------------------------------------------------------------
// Straight into the engines

async function rawRun(ctx: Context, dataset: Dataset, corpus: ChunkReqPayload[], batch: number, rss: RssSampler): Promise<RawRun> {
  const writer = new BulkWriter(ctx.db, ctx.lexical, dataset);
  const end = phase(rss);
  // The dataset's partial HNSW index, when the service keeps one, exists before the first vector, as in the service.
  if (needsVectorIndex(dataset.metric)) await ensureVectorIndex(ctx.db, dataset.id, dataset.size, dataset.metric);
  for (let i = 0; i < corpus.length; i += batch) await writer.write(corpus.slice(i, i + batch));
  return { ...end(corpus.length), batch, steps_ms: writer.steps };
}

// ---------------------------------------------------------------------------------------------
// Verification: every dataset holds the corpus, and the API's rows equal the raw rows

async function counts(ctx: Context, datasetId: string): Promise<Counts> {
  const n = async (table: string) => Number((await ctx.db(table).where({ dataset_id: datasetId }).count<{ n: string }[]>('* as n'))[0].n);
  return { chunks: await n('chunks'), vectors: await n('chunk_vectors'), lexical: await ctx.lexical.count(datasetId) };
}

const COMPARED_COLUMNS = [
  'chunk_html',
  'convert_html_to_text',
  'semantic_content',
  'fulltext_content',
  'fulltext_boost',
  'semantic_boost',
  'split_avg',
  'link',
  'metadata',
  'tag_set',
  'time_stamp',
  'weight',
  'num_value',
  'image_urls',
  'location_lat',
  'location_lon',
  'bm25_terms',
  'bm25_length',
  'words',
];

async function sampleRow(ctx: Context, datasetId: string, trackingId: string) {
  const row = await ctx.db('chunks').where({ dataset_id: datasetId, tracking_id: trackingId }).first();
  if (!row) return null;
  const vector = await ctx.db('chunk_vectors').where({ chunk_id: row.id }).first(ctx.db.raw('embedding::text as e'));
  const text = await ctx.lexical.text(datasetId, row.id);
  return { columns: JSON.stringify(COMPARED_COLUMNS.map((c) => row[c])), vector: vector?.e ?? null, text };
}

async function verify(
  ctx: Context,
  expected: number,
  raw: [string, Dataset],
  apis: [string, Dataset][],
  corpus: ChunkReqPayload[],
): Promise<IngestResult['verification']> {
  const failures: string[] = [];
  const datasets: Record<string, Counts> = {};
  for (const [name, dataset] of [raw, ...apis]) {
    const c = (datasets[name] = await counts(ctx, dataset.id));
    for (const [what, n] of Object.entries(c)) if (n !== expected) failures.push(`${name}: ${n} ${what}, expected ${expected}`);
  }
  const step = Math.max(1, Math.floor(corpus.length / 25));
  let sampled = 0;
  for (let i = 0; i < corpus.length; i += step) {
    const trackingId = corpus[i].tracking_id!;
    const want = await sampleRow(ctx, raw[1].id, trackingId);
    if (!want) {
      failures.push(`raw: chunk ${trackingId} missing`);
      continue;
    }
    if (want.vector === null || want.text === null) failures.push(`raw: chunk ${trackingId} has no ${want.vector === null ? 'vector' : 'lexical entry'}`);
    for (const [name, dataset] of apis) {
      const got = await sampleRow(ctx, dataset.id, trackingId);
      if (!got) failures.push(`${name}: chunk ${trackingId} missing`);
      else {
        if (got.columns !== want.columns)
          failures.push(`${name}: chunk ${trackingId} columns differ from raw: ${got.columns.slice(0, 200)} vs ${want.columns.slice(0, 200)}`);
        if (got.vector !== want.vector) failures.push(`${name}: chunk ${trackingId} vector differs from raw`);
        if (got.text !== want.text) failures.push(`${name}: chunk ${trackingId} lexical text differs from raw`);
      }
    }
    sampled++;
  }
  if (failures.length) throw new Error(`VERIFICATION FAILED:\n  ${failures.slice(0, 20).join('\n  ')}`);
  return { datasets, sampled_chunks: sampled };
}

// ---------------------------------------------------------------------------------------------
// Printing

export function formatIngest(mode: string, r: IngestResult): string {
  const o = r.options;
  const engineCpu = (c: Record<string, number>) =>
    Object.entries(c)
      .filter(([, ms]) => ms >= 50)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${fmt(ms / 1000, 1)}s`)
      .join(', ') || '–';
  const rows: (string | number)[][] = [
    ['run', 'chunks/s', 'API/raw', 'wall s', 'batch p50 ms', 'batch p99 ms', 'node CPU s', 'engines CPU', 'peak RSS MiB'],
    [
      `raw engines (bulk ${o.rawBatch})`,
      fmt(r.raw.chunks_per_s),
      '',
      fmt(r.raw.wall_ms / 1000, 1),
      '',
      '',
      fmt(r.raw.node_cpu_ms / 1000, 1),
      engineCpu(r.raw.engine_cpu_ms),
      fmt(r.raw.peak_rss_mib),
    ],
    ...r.api.map((a) => [
      `API ${a.batch}/req ×${a.concurrency}`,
      fmt(a.chunks_per_s),
      `${fmt(a.ratio_to_raw * 100)}%`,
      fmt(a.wall_ms / 1000, 1),
      fmt(a.latency_ms.p50, 1),
      fmt(a.latency_ms.p99, 1),
      fmt(a.node_cpu_ms / 1000, 1),
      engineCpu(a.engine_cpu_ms),
      fmt(a.peak_rss_mib),
    ]),
  ];
  const s = r.raw.steps_ms;
  const per = (ms: number) => fmt((ms / o.chunks) * 1000, 0);
  const lines = [
    `ingest · ${mode} (${r.engines.store}, ${r.engines.lexical}) · ${fmt(o.chunks)} chunks of ${r.corpus.words.min}–${r.corpus.words.max} words ` +
      `(mean ${r.corpus.words.mean}, ${fmt(r.corpus.htmlBytes.mean)} B HTML) · seed ${o.seed}`,
    '',
    table(rows),
    '',
    `raw steps, µs per chunk: extract ${per(s.extract)}, embed ${per(s.embed)}, chunks insert ${per(s.chunks)}, vectors insert ${per(s.vectors)}, lexical ${per(s.lexical)}`,
    ...r.api.map(
      (a) =>
        `API ×${a.concurrency} latency ms: mean ${fmt(a.latency_ms.mean, 1)}, p90 ${fmt(a.latency_ms.p90, 1)}, max ${fmt(a.latency_ms.max, 1)}; ` +
        `p50 of first tenth ${fmt(a.latency_ms.first_tenth_p50, 1)} vs last tenth ${fmt(a.latency_ms.last_tenth_p50, 1)}`,
    ),
    `service start ${fmt(r.service_start_ms)} ms` +
      (r.warmup ? `; warm-up (${r.warmup.chunks} chunks, not counted): API ${fmt(r.warmup.api_ms)} ms, raw ${fmt(r.warmup.raw_ms)} ms` : '') +
      `; process peak RSS ${fmt(r.process_peak_rss_mib)} MiB`,
    `verified: ${Object.entries(r.verification.datasets)
      .map(([name, c]) => `${name} ${c.chunks}/${c.vectors}/${c.lexical}`)
      .join(', ')} (chunks/vectors/lexical); ${r.verification.sampled_chunks} sampled chunks identical to raw`,
  ];
  for (const a of r.api) if (a.profile) lines.push('', formatProfile(a));
  return lines.join('\n');
}

function formatProfile(a: ApiRun): string {
  const p = a.profile!;
  const requests = a.requests;
  const perReq = (ms: number) => fmt(ms / requests, 1);
  const sqlMs = Object.values(p.sql).reduce((s, t) => s + t.ms, 0);
  const handlerOther = p.handler.ms - p.embed.ms - p.lexicalUpsert.ms - sqlMs;
  const rows: (string | number)[][] = [
    ['where (per request, mean)', 'ms', 'calls/req'],
    ['request, client-measured', perReq(a.latency_ms.mean * requests), '1'],
    ['  outside the handler (HTTP, JSON, validation, auth)', perReq(a.latency_ms.mean * requests - p.handler.ms), ''],
    ['  create_chunk handler', perReq(p.handler.ms), fmt(p.handler.count / requests, 1)],
    ['    embedder', perReq(p.embed.ms), fmt(p.embed.count / requests, 1)],
    ['    lexical upsert', perReq(p.lexicalUpsert.ms), fmt(p.lexicalUpsert.count / requests, 1)],
    ['    SQL (all statements)', perReq(sqlMs), fmt(Object.values(p.sql).reduce((s, t) => s + t.count, 0) / requests, 1)],
    ['    rest of handler (text extraction, JS, BEGIN/COMMIT)', perReq(handlerOther), ''],
  ];
  const top = Object.entries(p.sql)
    .sort((x, y) => y[1].ms - x[1].ms)
    .slice(0, 12)
    .map(([sql, t]) => [`      ${sql}`, perReq(t.ms), fmt(t.count / requests, 1)]);
  const note = a.concurrency > 1 ? ' (requests overlap: times add up to more than the wall clock)' : '';
  return [`profile, API ×${a.concurrency}${note}:`, table([...rows, ...top])].join('\n');
}
