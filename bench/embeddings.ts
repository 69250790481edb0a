// The embeddings suite: the local model (server/engines/embeddings/local) on its own and in a
// service. Documents of 100 and of 500 words embedded as the write path embeds them (one call, in
// the embedder's batches), queries one at a time (each a new text: no cached vector), and the
// service's start-up time and resident memory with the model as its default embedder and without.
// The model runs the same in both modes; the suite runs in whichever mode it is given.
import fs from 'node:fs';
import os from 'node:os';
import { innerText } from '../server/domain/chunks/content.js';
import { LOCAL_MODEL } from '../server/engines/embeddings/local/files.js';
import { LocalEmbedder } from '../server/engines/embeddings/local/index.js';
import { generateCorpus } from './corpus.js';
import type { BenchEmbedder, ModeEnvironment } from './modes.js';
import { fmt, percentile, table } from './report.js';
import { spawnService } from './service-process.js';

export interface EmbeddingsOptions {
  seed: number;
}

interface Throughput {
  words: number;
  texts: number;
  wall_ms: number;
  texts_per_s: number;
}

interface Start {
  embedder: BenchEmbedder;
  /** From the process's spawn to /api/health answering 200. */
  ready_ms: number;
  /** The service process's resident memory once healthy, the model's thread included. */
  rss_mib: number;
}

export interface EmbeddingsResult {
  suite: 'embeddings';
  mode: string;
  model: string;
  threads: number;
  model_start_ms: number;
  documents: Throughput[];
  query_ms: { n: number; p50: number; p99: number; mean: number };
  starts: Start[];
}

/** `count` texts of exactly `words` words, cut from the corpus's texts. */
function texts(words: number, count: number, seed: number): string[] {
  const pool = generateCorpus({ count: 2000, seed })
    .map((chunk) => innerText(chunk.chunk_html ?? ''))
    .join(' ')
    .split(/\s+/)
    .filter(Boolean);
  return Array.from({ length: count }, (_, i) => {
    const from = (i * 997 * words) % (pool.length - words);
    return pool.slice(from, from + words).join(' ');
  });
}

function rssMib(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

export async function runEmbeddings(modeEnv: ModeEnvironment, options: EmbeddingsOptions, log: (line: string) => void): Promise<EmbeddingsResult> {
  const embedder = new LocalEmbedder();
  let t0 = performance.now();
  await embedder.embed(['warm up'], 'document');
  const modelStartMs = performance.now() - t0;
  log(`model thread started and first text embedded in ${fmt(modelStartMs)} ms`);

  const documents: Throughput[] = [];
  for (const [words, count] of [
    [100, 240],
    [500, 96],
  ] as const) {
    const batch = texts(words, count, options.seed);
    t0 = performance.now();
    await embedder.embed(batch, 'document');
    const wallMs = performance.now() - t0;
    documents.push({ words, texts: count, wall_ms: Math.round(wallMs), texts_per_s: (count * 1000) / wallMs });
    log(`${count} texts of ${words} words: ${fmt(wallMs)} ms, ${fmt((count * 1000) / wallMs, 1)} a second`);
  }

  const queries = texts(4, 200, options.seed + 1).map((q, i) => `${q} ${i}`);
  const times: number[] = [];
  for (const query of queries) {
    t0 = performance.now();
    await embedder.embed([query], 'query');
    times.push(performance.now() - t0);
  }
  const queryMs = { n: times.length, p50: percentile(times, 50), p99: percentile(times, 99), mean: times.reduce((a, b) => a + b, 0) / times.length };
  log(`queries: p50 ${fmt(queryMs.p50, 1)} ms, p99 ${fmt(queryMs.p99, 1)} ms`);

  const starts: Start[] = [];
  for (const choice of ['builtin', 'local'] as const) {
    const env = await modeEnv.freshEnv(choice);
    t0 = performance.now();
    const service = await spawnService({ ...env, LOG_LEVEL: 'warn' }, log);
    const readyMs = performance.now() - t0;
    starts.push({ embedder: choice, ready_ms: Math.round(readyMs), rss_mib: rssMib(service.pid) });
    await service.stop();
    log(`start with ${choice}: ${fmt(readyMs)} ms to healthy, ${fmt(starts.at(-1)!.rss_mib)} MiB resident`);
  }
  return {
    suite: 'embeddings',
    mode: modeEnv.mode,
    model: LOCAL_MODEL.name,
    threads: os.availableParallelism(),
    model_start_ms: Math.round(modelStartMs),
    documents,
    query_ms: queryMs,
    starts,
  };
}

export function formatEmbeddings(mode: string, r: EmbeddingsResult): string {
  return [
    `embeddings · ${mode} · ${r.model} (ONNX Runtime, ${r.threads} threads) · model thread ready in ${fmt(r.model_start_ms)} ms`,
    '',
    table([['documents', 'texts', 'wall ms', 'texts/s'], ...r.documents.map((d) => [`${d.words} words`, d.texts, fmt(d.wall_ms), fmt(d.texts_per_s, 1)])]),
    '',
    `queries (one at a time, none cached): n ${r.query_ms.n}, p50 ${fmt(r.query_ms.p50, 1)} ms, p99 ${fmt(r.query_ms.p99, 1)} ms, mean ${fmt(r.query_ms.mean, 1)} ms`,
    '',
    table([
      ['service start (npm start)', 'ms to healthy', 'resident MiB'],
      ...r.starts.map((s) => [`DEFAULT_EMBEDDER=${s.embedder}`, fmt(s.ready_ms), fmt(s.rss_mib)]),
    ]),
  ].join('\n');
}
