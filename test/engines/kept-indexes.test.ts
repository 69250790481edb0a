// The indexes held in memory kept across a restart: closing, the service writes each dataset's
// held vectors (and their graph) and BM25 postings under DATA_DIR; the next start reads them from
// there instead of the database, brings them up to date from the change log, and answers as before.
// Kept files that cannot be read, or that are ahead of the database, are not used: the dataset is
// read again.
import { existsSync } from 'node:fs';
import { truncate } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createChunk, createOrganization } from '../../sdk/src/generated/sdk.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { retrieve } from '../../server/search/retrieval/index.js';
import { writeVectors } from '../../server/store/vectors.js';
import { testEnvironment } from '../support/env.js';
import { prng } from '../support/prng.js';
import { serviceOn, type TestService } from '../support/service.js';
import { packIds } from '../../server/search/chunkIdWords.js';

const DIMENSION = 16;
const CHUNKS = 1200;

const randomVectors = (count: number, random: () => number) => Array.from({ length: count }, () => Array.from({ length: DIMENSION }, () => random() * 2 - 1));

async function insertChunks(service: TestService, dataset: DatasetRow, list: number[][]): Promise<string[]> {
  const db = service.services.store.db;
  const rows: { id: string }[] = await db('chunks')
    .insert(list.map((_, i) => ({ dataset_id: dataset.id, chunk_html: `chunk ${i}` })))
    .returning('id');
  await writeVectors(
    db,
    dataset.id,
    rows.map((r, i) => ({ chunkId: r.id, vector: list[i] })),
  );
  return rows.map((r) => r.id);
}

async function nearest(service: TestService, dataset: DatasetRow, vector: number[]): Promise<string[]> {
  return (await retrieve(service.services, 'semantic', { dataset, query: 'q', vector, limit: 10, offset: 0 })).hits.map((h) => h.id);
}

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
};

/** The share of the exact 10 nearest (by cosine) of each query that the held vectors answer. */
async function recallAt10(service: TestService, dataset: DatasetRow, stored: number[][], ids: string[], queries: number[][]): Promise<number> {
  let found = 0;
  for (const query of queries) {
    const exact = stored
      .map((vector, i) => ({ id: ids[i], similarity: cosine(vector, query) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, 10)
      .map((n) => n.id);
    const answered = new Set(await nearest(service, dataset, query));
    found += exact.filter((id) => answered.has(id)).length;
  }
  return found / (10 * queries.length);
}

/** The statements holding `marker` (one that reads a dataset page by page, building anew) sent while `run` runs. */
async function reads(service: TestService, marker: string, run: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const listener = (q: { sql: string }) => {
    if (q.sql.includes(marker)) count++;
  };
  service.services.store.db.on('query', listener);
  try {
    await run();
  } finally {
    service.services.store.db.off('query', listener);
  }
  return count;
}
const VECTOR_PAGES = 'join chunk_vectors';
const TERM_PAGES = 'c.bm25_terms is not null\n      order by c.id limit';

/** A service with a dataset of CHUNKS vectors held in memory, and the environment to start it again on. */
async function heldDataset(random: () => number) {
  const environment = await testEnvironment();
  const service = await serviceOn(environment);
  const org = (await createOrganization({ client: service.client(), body: { name: 'Kept vectors' } })).data!;
  const dataset = await service.newDataset(org.id, 'kept', { DISTANCE_METRIC: 'cosine', EMBEDDING_SIZE: DIMENSION });
  const stored = randomVectors(CHUNKS, random);
  const ids = await insertChunks(service, dataset, stored);
  expect(await service.services.vectors.ready(dataset.id)).not.toBeNull();
  const kept = path.join(environment.DATA_DIR, 'kept-indexes', 'vectors', dataset.id);
  return { environment, service, dataset, stored, ids, kept };
}

describe('vectors held in memory, across a restart', () => {
  it('start from the vectors kept at the last close, caught up with the writes made since', async () => {
    const random = prng(11);
    const { environment, service: first, dataset, stored, ids, kept } = await heldDataset(random);
    const queries = randomVectors(20, random);
    const before = await Promise.all(queries.map((q) => nearest(first, dataset, q)));
    await first.stop();
    expect(existsSync(path.join(kept, 'version.json'))).toBe(true);

    const service = await serviceOn(environment);
    try {
      // Written before the kept vectors are read: only the change log tells of them.
      const [added] = await insertChunks(service, dataset, [queries[0]]);
      const removed = before[1][0];
      await service.services.store.db('chunks').where({ id: removed }).del();

      expect(await reads(service, VECTOR_PAGES, () => service.services.vectors.ready(dataset.id))).toBe(0);
      expect(existsSync(kept)).toBe(false);
      expect((await nearest(service, dataset, queries[0]))[0]).toBe(added);
      expect(await nearest(service, dataset, queries[1])).not.toContain(removed);
      for (let i = 2; i < queries.length; i++) expect(await nearest(service, dataset, queries[i])).toEqual(before[i]);
      // The exact nearest of a stored vector is that chunk itself.
      expect((await nearest(service, dataset, stored[7]))[0]).toBe(ids[7]);
    } finally {
      await service.stop();
    }
  }, 120_000);

  // A graph built anew is not the one kept (threads and insertion order differ), so each is held to
  // the exact neighbours rather than to the other's answers.
  it('read the dataset again when the kept vectors are damaged or ahead of the database', async () => {
    const random = prng(12);
    const { environment, service: first, dataset, stored, ids, kept } = await heldDataset(random);
    const queries = randomVectors(10, random);
    expect(await recallAt10(first, dataset, stored, ids, queries)).toBeGreaterThanOrEqual(0.9);
    await first.stop();

    await truncate(path.join(kept, 'vectors.f32'), 100);
    let service = await serviceOn(environment);
    try {
      expect(await reads(service, VECTOR_PAGES, () => service.services.vectors.ready(dataset.id))).toBeGreaterThan(0);
      expect(existsSync(kept)).toBe(false);
      expect(await recallAt10(service, dataset, stored, ids, queries)).toBeGreaterThanOrEqual(0.9);
      expect((await nearest(service, dataset, stored[7]))[0]).toBe(ids[7]);
    } finally {
      await service.stop();
    }

    // The database went back (restored from a backup, say): its version is now below the kept one.
    expect(existsSync(path.join(kept, 'version.json'))).toBe(true);
    service = await serviceOn(environment);
    try {
      // As a restored database has them: its version, and no change logged above it.
      await service.services.store.db('bm25_dataset_totals').where({ dataset_id: dataset.id }).update({ version: 0 });
      await service.services.store.db('bm25_changes').where({ dataset_id: dataset.id }).delete();
      expect(await reads(service, VECTOR_PAGES, () => service.services.vectors.ready(dataset.id))).toBeGreaterThan(0);
      expect(await recallAt10(service, dataset, stored, ids, queries)).toBeGreaterThanOrEqual(0.9);
      expect((await nearest(service, dataset, stored[9]))[0]).toBe(ids[9]);
    } finally {
      await service.stop();
    }
  }, 120_000);
});

describe('BM25 postings held in memory, across a restart', () => {
  const WORDS = 'glacier river canyon forest meadow harbour lantern compass orchard falcon summit valley granite copper amber willow'.split(' ');
  const QUERIES = ['glacier river', 'lantern', 'copper amber willow', 'zephyr', 'summit canyon orchard'];

  /** The query's BM25 hits from the postings held in memory are those SQL computes (scores summed in another order). */
  async function expectAsInSql(service: TestService, dataset: DatasetRow, query: string): Promise<string[]> {
    const search = async () => (await retrieve(service.services, 'bm25', { dataset, query, limit: 10, offset: 0 })).hits;
    expect(await service.services.bm25.current(dataset.id)).not.toBeNull();
    const held = await search();
    service.services.bm25.enabled = false;
    const sql = await search().finally(() => {
      service.services.bm25.enabled = true;
    });
    expect(held.map((h) => h.id)).toEqual(sql.map((h) => h.id));
    for (const [i, hit] of held.entries()) expect(hit.score).toBeCloseTo(sql[i].score, 9);
    return held.map((h) => h.id);
  }

  it('start from the postings kept at the last close, caught up with the writes made since', async () => {
    const random = prng(13);
    const environment = await testEnvironment();
    const first = await serviceOn(environment);
    const org = (await createOrganization({ client: first.client(), body: { name: 'Kept postings' } })).data!;
    const dataset = await first.newDataset(org.id, 'kept postings');
    const chunks = Array.from({ length: 300 }, () => ({
      chunk_html: Array.from({ length: 4 + Math.floor(random() * 12) }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' '),
    }));
    const headers = { 'SVC-Dataset': dataset.id };
    for (let i = 0; i < chunks.length; i += 100) await createChunk({ client: first.client(), headers, body: chunks.slice(i, i + 100), throwOnError: true });
    await first.services.bm25.ready(dataset.id);
    // A removed chunk leaves a dead posting slot in what is kept.
    const [removed] = await first.services.store.db('chunks').where({ dataset_id: dataset.id }).orderBy('id').limit(1).pluck('id');
    await first.services.store.db('chunks').where({ id: removed }).del();
    await first.services.bm25.ready(dataset.id);
    await first.stop();
    const kept = path.join(environment.DATA_DIR, 'kept-indexes', 'bm25', dataset.id);
    expect(existsSync(path.join(kept, 'version.json'))).toBe(true);

    let service = await serviceOn(environment);
    try {
      const read = await reads(service, TERM_PAGES, async () => {
        await createChunk({ client: service.client(), headers, body: { chunk_html: 'zephyr glacier zephyr' }, throwOnError: true });
        await service.services.bm25.ready(dataset.id);
      });
      expect(read).toBe(0);
      expect(existsSync(kept)).toBe(false);
      for (const query of QUERIES) expect(await expectAsInSql(service, dataset, query)).not.toContain(removed);
      expect(await expectAsInSql(service, dataset, 'zephyr')).toHaveLength(1);
      // The ids' words (what a filter hands the vectors' worker) read back with the ids.
      const index = (await service.services.bm25.current(dataset.id))!;
      const all = Int32Array.from({ length: index.capacity }, (_, d) => d);
      expect(index.idWordsOf(all, all.length)).toEqual(packIds(Array.from(all, (d) => index.idOf(d))));
    } finally {
      await service.stop();
    }

    await truncate(path.join(kept, 'ordinals.i32'), 10);
    service = await serviceOn(environment);
    try {
      expect(await reads(service, TERM_PAGES, () => service.services.bm25.ready(dataset.id))).toBeGreaterThan(0);
      for (const query of QUERIES) await expectAsInSql(service, dataset, query);
    } finally {
      await service.stop();
    }
  }, 120_000);
});
