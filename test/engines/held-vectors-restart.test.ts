// The vectors held in memory kept across a restart: closing, the service writes each dataset's
// vectors and graph under DATA_DIR; the next start reads them from there instead of the vectors
// table, brings them up to date from the change log, and answers as before. A kept set that cannot
// be read, or that is ahead of the database, is not used: the dataset's vectors are read again.
import { existsSync } from 'node:fs';
import { truncate } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../../generated/client/sdk.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { retrieve } from '../../server/search/retrieval/index.js';
import { writeVectors } from '../../server/store/vectors.js';
import { testEnvironment } from '../support/env.js';
import { prng } from '../support/prng.js';
import { serviceOn, type TestService } from '../support/service.js';

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

/** The statements that read a dataset's vectors page by page (building anew), sent while `run` runs. */
async function pageReads(service: TestService, run: () => Promise<unknown>): Promise<number> {
  let reads = 0;
  const listener = (q: { sql: string }) => {
    if (q.sql.includes('join chunk_vectors')) reads++;
  };
  service.services.store.db.on('query', listener);
  try {
    await run();
  } finally {
    service.services.store.db.off('query', listener);
  }
  return reads;
}

/** A service with a dataset of CHUNKS vectors held in memory, and the environment to start it again on. */
async function heldDataset(random: () => number) {
  const environment = await testEnvironment();
  const service = await serviceOn(environment);
  const org = (await createOrganization({ client: service.client(), body: { name: 'Kept vectors' } })).data!;
  const dataset = await service.newDataset(org.id, 'kept', { DISTANCE_METRIC: 'cosine', EMBEDDING_SIZE: DIMENSION });
  const stored = randomVectors(CHUNKS, random);
  const ids = await insertChunks(service, dataset, stored);
  expect(await service.services.vectors.ready(dataset.id)).not.toBeNull();
  const kept = path.join(environment.DATA_DIR, 'held-vectors', dataset.id);
  return { environment, service, dataset, stored, ids, kept };
}

describe('held vectors across a restart', () => {
  it('start from the vectors kept at the last close, caught up with the writes made since', async () => {
    const random = prng(11);
    const { environment, service: first, dataset, stored, ids, kept } = await heldDataset(random);
    const queries = randomVectors(20, random);
    const before = await Promise.all(queries.map((q) => nearest(first, dataset, q)));
    await first.stop();
    expect(existsSync(path.join(kept, 'kept.json'))).toBe(true);

    const service = await serviceOn(environment);
    try {
      // Written before the kept vectors are read: only the change log tells of them.
      const [added] = await insertChunks(service, dataset, [queries[0]]);
      const removed = before[1][0];
      await service.services.store.db('chunks').where({ id: removed }).del();

      expect(await pageReads(service, () => service.services.vectors.ready(dataset.id))).toBe(0);
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

  it('read the dataset again when the kept vectors are damaged or ahead of the database', async () => {
    const random = prng(12);
    const { environment, service: first, dataset, kept } = await heldDataset(random);
    const query = randomVectors(1, random)[0];
    const before = await nearest(first, dataset, query);
    await first.stop();

    await truncate(path.join(kept, 'vectors.f32'), 100);
    let service = await serviceOn(environment);
    try {
      expect(await pageReads(service, () => service.services.vectors.ready(dataset.id))).toBeGreaterThan(0);
      expect(existsSync(kept)).toBe(false);
      expect(await nearest(service, dataset, query)).toEqual(before);
    } finally {
      await service.stop();
    }

    // The database went back (restored from a backup, say): its version is now below the kept one.
    expect(existsSync(path.join(kept, 'kept.json'))).toBe(true);
    service = await serviceOn(environment);
    try {
      await service.services.store.db('bm25_dataset_totals').where({ dataset_id: dataset.id }).update({ version: 0 });
      expect(await pageReads(service, () => service.services.vectors.ready(dataset.id))).toBeGreaterThan(0);
      expect(await nearest(service, dataset, query)).toEqual(before);
    } finally {
      await service.stop();
    }
  }, 120_000);
});
