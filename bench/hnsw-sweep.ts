// HNSW recall against exact search, by index parameters: the search suite's corpus and queries,
// embedded by the built-in embedder or the local model, in a table of their own on the full mode's
// PostgreSQL. For choosing m, ef_construction and ef_search; the service is not involved.
//
//   npx tsx bench/hnsw-sweep.ts [chunks=100000] [m:ef_construction,…=16:64] [ef_search,…=40,100,200,400] [builtin|local]
//
// Prints, per index, its build time, then per ef_search the mean recall@10 over 200 queries and
// the p50 of one kNN statement (one client, nothing else running).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import knex from 'knex';
import { startServices } from '../scripts/services/index.js';
import { innerText } from '../server/domain/chunks/content.js';
import { BUILTIN_MODEL, embedderFor } from '../server/engines/embeddings/index.js';
import { LOCAL_MODEL } from '../server/engines/embeddings/local/files.js';
import { STRICT_OUTBOUND } from '../server/engines/outbound.js';
import { vectorLiteral } from '../server/store/vectors.js';
import { generateCorpus } from './corpus.js';
import { queriesFrom } from './search.js';

const chunks = Number(process.argv[2] ?? 100_000);
const indexes = (process.argv[3] ?? '16:64').split(',').map((pair) => pair.split(':').map(Number));
const efSearches = (process.argv[4] ?? '40,100,200,400').split(',').map(Number);
const model = process.argv[5] === 'local' ? LOCAL_MODEL.name : BUILTIN_MODEL;
const K = 10;

const dir = await mkdtemp(path.join(os.tmpdir(), 'hnsw-sweep-'));
const services = await startServices({ dataDir: dir, log: () => {} });
const db = knex({ client: 'pg', connection: services.env.DATABASE_URL, pool: { min: 1, max: 1 } });
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);
try {
  await db.raw('create extension if not exists vector');
  await db.raw('create table sweep (id int primary key, embedding vector(384))');
  const embedder = embedderFor({ EMBEDDING_MODEL_NAME: model, EMBEDDING_SIZE: 384 }, STRICT_OUTBOUND);
  const corpus = generateCorpus({ count: chunks, seed: 42 });
  let started = performance.now();
  for (let i = 0; i < chunks; i += 1000) {
    const batch = corpus.slice(i, i + 1000);
    const vectors = await embedder.embed(
      batch.map((c) => innerText(c.chunk_html ?? '')),
      'document',
    );
    await db('sweep').insert(vectors.map((v, j) => ({ id: i + j, embedding: vectorLiteral(v) })));
  }
  console.log(`${chunks} vectors of ${model} written in ${seconds(started)} s`);
  // The search suite's measured queries (its seed + 1000).
  const queries = await embedder.embed(queriesFrom(corpus, 200, 42 + 1000), 'query');
  const literals = queries.map(vectorLiteral);
  await db.raw('set max_parallel_workers_per_gather = 0');
  started = performance.now();
  const truth: number[][] = [];
  for (const v of literals)
    truth.push((await db.raw('select id from sweep order by (embedding <=> ?) + 0, id limit ?', [v, K])).rows.map((r: { id: number }) => r.id));
  console.log(`exact search: ${((performance.now() - started) / literals.length).toFixed(2)} ms a query`);

  await db.raw("set maintenance_work_mem = '2GB'");
  for (const [m, efConstruction] of indexes) {
    await db.raw('drop index if exists sweep_hnsw');
    started = performance.now();
    await db.raw(`create index sweep_hnsw on sweep using hnsw (embedding vector_cosine_ops) with (m = ${m}, ef_construction = ${efConstruction})`);
    console.log(`m ${m}, ef_construction ${efConstruction}: built in ${seconds(started)} s`);
    for (const ef of efSearches) {
      await db.raw(`set hnsw.ef_search = ${ef}`);
      let found = 0;
      const times: number[] = [];
      for (const [i, v] of literals.entries()) {
        const t0 = performance.now();
        const ids = new Set((await db.raw('select id from sweep order by embedding <=> ? limit ?', [v, K])).rows.map((r: { id: number }) => r.id));
        times.push(performance.now() - t0);
        found += truth[i].filter((id) => ids.has(id)).length;
      }
      times.sort((a, b) => a - b);
      const p50 = times[Math.floor(times.length / 2)];
      console.log(`  ef_search ${ef}: recall@${K} ${(found / (K * literals.length)).toFixed(3)}, p50 ${p50.toFixed(2)} ms`);
    }
  }
} finally {
  await db.destroy();
  await services.stop();
  await rm(dir, { recursive: true, force: true });
}
