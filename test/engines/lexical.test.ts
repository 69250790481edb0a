// The lexical index seam, against whichever engine the mode configures:
// Postgres full-text in the embedded project, Typesense in the full project.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLexicalIndex, type LexicalIndex } from '../../server/engines/lexical/index.js';
import { openStore, type Store } from '../../server/store/db.js';
import { mode, testConfig } from '../support/env.js';

describe(`lexical index (${mode})`, () => {
  let store: Store;
  let index: LexicalIndex;
  // Each test gets its own dataset so tests cannot see each other's documents.
  let organizationId: string;

  const newDataset = async (): Promise<string> => {
    const [row] = await store.db('datasets').insert({ organization_id: organizationId, name: 'lexical test' }).returning('id');
    return row.id as string;
  };
  const ids = async (datasetId: string, query: string, limit = 10) => (await index.search({ datasetId, query, limit })).map((h) => h.id);

  beforeAll(async () => {
    const config = await testConfig();
    store = await openStore(config.store);
    index = await createLexicalIndex(config.lexical, store);
    const [org] = await store.db('organizations').insert({ name: 'lexical test org' }).returning('id');
    organizationId = org.id;
  });

  afterAll(async () => {
    await index?.close();
    await store?.close();
  });

  it('uses the engine the mode implies, and prepare is idempotent', async () => {
    expect(index.kind).toBe(mode === 'full' ? 'typesense' : 'postgres');
    await expect(index.prepare()).resolves.toBeUndefined();
  });

  it('pings', async () => {
    await expect(index.ping()).resolves.toBeUndefined();
  });

  it('finds a document by its own words, only in its dataset', async () => {
    const [a, b] = [await newDataset(), await newDataset()];
    const id = randomUUID();
    await index.upsert([{ id, datasetId: a, text: 'Pelicans migrate across the estuary every autumn' }]);
    expect(await ids(a, 'pelicans estuary')).toEqual([id]);
    expect(await ids(b, 'pelicans estuary')).toEqual([]);
    expect(await ids(a, 'submarine')).toEqual([]);
    expect(await ids(a, '   ')).toEqual([]);
  });

  it('upsert replaces the text: old words no longer match', async () => {
    const ds = await newDataset();
    const id = randomUUID();
    await index.upsert([{ id, datasetId: ds, text: 'volcano eruption lava' }]);
    await index.upsert([{ id, datasetId: ds, text: 'glacier iceberg tundra' }]);
    expect(await ids(ds, 'volcano')).toEqual([]);
    expect(await ids(ds, 'glacier')).toEqual([id]);
  });

  it('upserts a batch, keeping the last version of a repeated id', async () => {
    const ds = await newDataset();
    const docs = Array.from({ length: 50 }, (_, i) => ({ id: randomUUID(), datasetId: ds, text: `harbor lighthouse number ${i}` }));
    const repeated = { ...docs[0], text: 'windmill meadow' };
    await index.upsert([...docs, repeated]);
    expect(await ids(ds, 'lighthouse', 100)).toHaveLength(49);
    expect(await ids(ds, 'windmill')).toEqual([docs[0].id]);
    expect(await ids(ds, 'lighthouse', 5)).toHaveLength(5);
  });

  it('removes documents by id, scoped to their dataset', async () => {
    const [ds, other] = [await newDataset(), await newDataset()];
    const [keep, drop] = [randomUUID(), randomUUID()];
    await index.upsert([
      { id: keep, datasetId: ds, text: 'orchard apple harvest' },
      { id: drop, datasetId: ds, text: 'orchard pear harvest' },
    ]);
    await index.remove(other, [drop]); // wrong dataset: nothing happens
    expect((await ids(ds, 'orchard')).sort()).toEqual([keep, drop].sort());
    await index.remove(ds, [drop]);
    expect(await ids(ds, 'orchard')).toEqual([keep]);
    await index.remove(ds, []);
  });

  it('removes a whole dataset, leaving the others', async () => {
    const [ds, other] = [await newDataset(), await newDataset()];
    const [x, y, z] = [randomUUID(), randomUUID(), randomUUID()];
    await index.upsert([
      { id: x, datasetId: ds, text: 'canyon river rafting' },
      { id: y, datasetId: ds, text: 'canyon hiking trail' },
      { id: z, datasetId: other, text: 'canyon photography' },
    ]);
    await index.removeDataset(ds);
    expect(await ids(ds, 'canyon')).toEqual([]);
    expect(await ids(other, 'canyon')).toEqual([z]);
  });

  it('ranks the better match first', async () => {
    const ds = await newDataset();
    const [best, weaker] = [randomUUID(), randomUUID()];
    // The better match goes in first, so insertion order cannot explain a correct result.
    await index.upsert([{ id: best, datasetId: ds, text: 'The quick brown fox jumps over the lazy dog' }]);
    await index.upsert([
      {
        id: weaker,
        datasetId: ds,
        text: 'A brown bear walked slowly through the forest at dawn while, far away and much later, a quick fox was seen near the farm',
      },
    ]);
    const hits = await index.search({ datasetId: ds, query: 'quick brown fox', limit: 10 });
    expect(hits.map((h) => h.id)).toEqual([best, weaker]);
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
  });

  it('answers a query longer than a URL can carry', async () => {
    const ds = await newDataset();
    const id = randomUUID();
    await index.upsert([{ id, datasetId: ds, text: 'glacier retreat measured over decades' }]);
    // 8,000 characters is the contract's longest query; Typesense refuses GET queries over 4,000.
    const query = `glacier ${'0'.repeat(7990)}`;
    expect(query.length).toBeGreaterThan(4000);
    expect(await ids(ds, query)).toEqual([id]);
  });
});
