// The local embedding model (all-MiniLM-L6-v2, installed by `npm install`): the vectors it makes,
// how its queue treats queries and documents, and a service whose default embedder it is, through
// the API in the mode's engines: semantic search finds meaning that shares no word with the query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization, searchChunks, updateDataset } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { LOCAL_MODEL } from '../../server/engines/embeddings/local/files.js';
import { LocalEmbedder, localModelInstalled } from '../../server/engines/embeddings/local/index.js';
import { EmbeddingError } from '../../server/engines/embeddings/types.js';
import { mode } from '../support/env.js';
import { startTestService, type TestService } from '../support/service.js';
import { longestStall } from '../support/threadFree.js';

const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);
const embedder = new LocalEmbedder();

describe('the local model', () => {
  it('is installed (npm install does it; npm run install-model says why it could not)', () => {
    expect(localModelInstalled()).toBe(true);
  });

  it('makes unit vectors of its dimension that are near for like meanings and far for others', async () => {
    const [car, automobile, weather] = await embedder.embed(['I bought a new car', 'I purchased an automobile', 'It is cold and raining today'], 'document');
    for (const vector of [car, automobile, weather]) {
      expect(vector).toHaveLength(LOCAL_MODEL.dimension);
      expect(dot(vector, vector)).toBeCloseTo(1, 4);
    }
    expect(dot(car, automobile)).toBeGreaterThan(0.6);
    expect(dot(car, weather)).toBeLessThan(0.3);
  });

  it('gives a text the same vector alone and among others of other lengths, in the given order', async () => {
    const texts = ['short', 'a somewhat longer text about library catalogues and indexing', 'x', 'medium length words here'];
    const together = await embedder.embed(texts, 'document');
    for (const [i, text] of texts.entries()) expect(await embedder.embed([text], 'document')).toEqual([together[i]]);
  });

  it('reads the first 256 word pieces of a long text and ignores the rest', async () => {
    const head = Array.from({ length: 300 }, (_, i) => `catalogue${i % 7} entry`).join(' ');
    const [a, b] = await embedder.embed([`${head} the ocean is deep`, `${head} volcanoes erupt lava`], 'document');
    expect(dot(a, b)).toBeGreaterThan(0.9999);
  });

  it("leaves the service's thread free while it embeds a write's 120 chunks", async () => {
    const chunks = Array.from({ length: 120 }, (_, i) => `chunk ${i}: ` + 'shelving catalogued books by subject and author '.repeat(12));
    const { took, longest } = await longestStall(() => embedder.embed(chunks, 'document'));
    // A model on the service's thread would leave the timer silent for all of its run.
    expect(took).toBeGreaterThan(150);
    expect(longest).toBeLessThan(Math.min(100, took / 2));
  });

  it('answers a query before the document batches queued ahead of it', async () => {
    const documents = Array.from({ length: 96 }, (_, i) => `document number ${i} about shelving books by subject`);
    const finished: string[] = [];
    const ingest = embedder.embed(documents, 'document').then(() => finished.push('documents'));
    const query = embedder.embed([`a query ${Date.now()}`], 'query').then(() => finished.push('query'));
    await Promise.all([ingest, query]);
    expect(finished).toEqual(['query', 'documents']);
  });

  it('refuses more waiting documents than its queue holds, as a failure worth retrying', async () => {
    const error = await embedder
      .embed(
        Array.from({ length: 5000 }, () => 'text'),
        'document',
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as EmbeddingError).transient).toBe(true);
    expect((error as Error).message).toMatch(/texts waiting/);
  });
});

describe(`a service whose default embedder is the local model (${mode})`, () => {
  let service: TestService;
  let orgId: string;

  beforeAll(async () => {
    service = await startTestService({ DEFAULT_EMBEDDER: 'local' });
    orgId = (await createOrganization({ client: service.client(), body: { name: 'Local model' } })).data!.id;
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('names it in health and records it in new datasets', async () => {
    const health = await service.request('GET', '/api/health');
    expect(health.body.embedder).toBe(LOCAL_MODEL.name);
    const dataset = await service.newDataset(orgId, 'defaults');
    expect(dataset.server_configuration).toMatchObject({ EMBEDDING_MODEL_NAME: LOCAL_MODEL.name, EMBEDDING_SIZE: 384, EMBEDDING_BASE_URL: null });
  });

  it('finds by meaning in semantic search: a query that shares no word with its answer', async () => {
    const dataset = await service.newDataset(orgId, 'meaning');
    const texts: [string, string][] = [
      ['car', 'Our garage repairs automobiles: brakes, tyres and engines.'],
      ['bread', 'Knead the dough, let it rise, then bake the loaf for forty minutes.'],
      ['stocks', 'Share prices fell sharply on the exchange this morning.'],
      ['whales', 'Humpback whales migrate thousands of kilometres every year.'],
    ];
    const created = await createChunk({
      client: service.client(),
      headers: { 'SVC-Dataset': dataset.id },
      body: texts.map(([tracking_id, text]) => ({ tracking_id, chunk_html: text })),
    });
    expect(created.response.status).toBe(200);
    const top = async (query: string) => {
      const { data, response } = await searchChunks({
        client: service.client(),
        headers: { 'SVC-Dataset': dataset.id, 'X-API-Version': 'V2' },
        body: { query, search_type: 'semantic', page_size: 1 },
      });
      expect(response.status).toBe(200);
      return ((data as T.SearchResponseBody).chunks[0].chunk as T.ChunkMetadata).tracking_id;
    };
    expect(await top('where can I get my car fixed')).toBe('car');
    expect(await top('baking recipes')).toBe('bread');
    expect(await top('stock market crash')).toBe('stocks');
    expect(await top('ocean mammals')).toBe('whales');
  });

  it('keeps the model a dataset was made with: another is refused while chunks exist', async () => {
    const dataset = await service.newDataset(orgId, 'kept');
    await createChunk({ client: service.client(), headers: { 'SVC-Dataset': dataset.id }, body: { chunk_html: 'one chunk' } });
    const change = (server_configuration: T.DatasetConfigurationDto) =>
      updateDataset({ client: service.client(), headers: { 'SVC-Organization': orgId }, body: { dataset_id: dataset.id, server_configuration } });
    const builtin = await change({ EMBEDDING_MODEL_NAME: 'builtin' });
    expect(builtin.response.status).toBe(400);
    expect((builtin.error as { message: string }).message).toMatch(/EMBEDDING_MODEL_NAME.*holds chunks/);
    const unknown = await change({ EMBEDDING_MODEL_NAME: 'text-embedding-3-small' });
    expect(unknown.response.status).toBe(400);
    expect((unknown.error as { message: string }).message).toMatch(/without EMBEDDING_BASE_URL it names a model the service runs/);
    const size = await service.request('POST', '/api/dataset', {
      headers: { authorization: 'test-admin-key-0123456789', 'SVC-Organization': orgId },
      body: { dataset_name: 'wrong size', server_configuration: { EMBEDDING_SIZE: 768 } },
    });
    expect(size.status).toBe(400);
    expect(size.body.message).toMatch(/EMBEDDING_SIZE: all-MiniLM-L6-v2 makes vectors of 384 numbers, got 768/);
  });
});
