// The lexical engine seam, against whichever engine the mode configures (the dataset's vocabulary on
// PostgreSQL in the embedded project, Typesense in the full project), fed by the service's own chunk
// writes: what a query word matches beyond itself, and that writes, updates and deletes reach it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization, deleteChunk, updateChunk } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { mode } from '../support/env.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let organizationId: string;

const lexical = () => service.services.lexical;

async function datasetWith(texts: string[]): Promise<{ datasetId: string; ids: string[] }> {
  const dataset = await service.newDataset(organizationId, 'lexical seam');
  const { data, error } = await createChunk({
    client: service.client(),
    headers: { 'SVC-Dataset': dataset.id },
    body: texts.map((chunk_html) => ({ chunk_html })),
  });
  expect(error).toBeUndefined();
  return { datasetId: dataset.id, ids: (data!.chunk_metadata as T.ChunkMetadata[]).map((c) => c.id) };
}

const completions = async (datasetId: string, word: string, limit = 8) =>
  (await lexical().matchedWords({ datasetId, words: [{ word, prefix: true }], limit }))[0];

beforeAll(async () => {
  service = await startTestService();
  organizationId = (await createOrganization({ client: service.client(), body: { name: 'Lexical seam' } })).data!.id;
});

afterAll(async () => {
  await service?.stop();
});

describe(`lexical engine (${mode})`, () => {
  it('is the engine the mode implies, pings, and prepares idempotently', async () => {
    expect(lexical().kind).toBe(mode === 'full' ? 'typesense' : 'postgres');
    await expect(lexical().ping()).resolves.toBeUndefined();
    await expect(lexical().prepare()).resolves.toBeUndefined();
  });

  it("completes a word being typed with the dataset's words, only in its dataset", async () => {
    const { datasetId } = await datasetWith(['Pelicans migrate across the estuary', 'A pelican on the pier', 'Pelicans nest in spring']);
    const other = await datasetWith(['Penguins swim']);
    expect((await completions(datasetId, 'pel')).sort()).toEqual(['pelican', 'pelicans']);
    expect(await completions(datasetId, 'pen')).toEqual([]);
    expect(await completions(other.datasetId, 'pel')).toEqual([]);
    // At most `limit` words; a word is not its own completion.
    expect(await completions(datasetId, 'pel', 1)).toHaveLength(1);
    expect(await completions(datasetId, 'pelicans')).toEqual([]);
  });

  it('matches a whole word to nothing else, except a near spelling where the engine forgives typos', async () => {
    const { datasetId } = await datasetWith(['A zeppelin drifted over the town at dusk']);
    const [held, misspelt] = await lexical().matchedWords({
      datasetId,
      words: [
        { word: 'zeppelin', prefix: false },
        { word: 'zepelin', prefix: false },
      ],
      limit: 8,
    });
    expect(held).toEqual([]);
    expect(misspelt).toEqual(mode === 'full' ? ['zeppelin'] : []);
  });

  it('follows chunk updates and deletes: replaced and deleted words no longer match', async () => {
    const { datasetId, ids } = await datasetWith(['volcano eruption lava', 'orchard apple harvest']);
    expect(await completions(datasetId, 'volc')).toEqual(['volcano']);
    const updated = await updateChunk({
      client: service.client(),
      headers: { 'SVC-Dataset': datasetId },
      body: { chunk_id: ids[0], chunk_html: 'glacier iceberg tundra' },
    });
    expect(updated.error).toBeUndefined();
    expect(await completions(datasetId, 'volc')).toEqual([]);
    expect(await completions(datasetId, 'glac')).toEqual(['glacier']);
    const deleted = await deleteChunk({ client: service.client(), headers: { 'SVC-Dataset': datasetId }, path: { chunk_id: ids[1] } });
    expect(deleted.error).toBeUndefined();
    expect(await completions(datasetId, 'orch')).toEqual([]);
  });

  it('answers a word longer than a URL can carry', async () => {
    const { datasetId } = await datasetWith(['glacier retreat measured over decades']);
    // Typesense refuses GET queries over 4,000 characters: the words go in a POST body.
    const [matched] = await lexical().matchedWords({ datasetId, words: [{ word: 'g'.repeat(5000), prefix: false }], limit: 8 });
    expect(matched).toEqual([]);
  });
});
