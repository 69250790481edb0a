// Query text features against the engines of the mode: the dataset vocabulary kept by chunk writes,
// typo correction against it, weighted multi-query fusion, and the conditions of quoted and negated
// words in every search type. Chunks are written through the API, so the write path is the real one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createDataset, createOrganization, deleteChunk, updateChunk } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { HttpError } from '../../server/errors.js';
import { fuseWeightedLists } from '../../server/search/query/fusion.js';
import { prepareQueries, retrieveQueries } from '../../server/search/query/index.js';
import { parseQuery } from '../../server/search/query/parse.js';
import { correctTypos } from '../../server/search/query/typos/index.js';
import type { SearchType } from '../../server/search/types.js';
import { mode } from '../support/env.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let dataset: DatasetRow;
const db = () => service.services.store.db;
const ids = new Map<string, string>();
const trackingOf = (id: string) => [...ids].find(([, v]) => v === id)?.[0];

const CHUNKS: [string, string][] = [
  ['kettle-1', 'The kettle boils water in ninety seconds and switches off by itself.'],
  ['kettle-2', 'Descaling the kettle every month keeps the heating element clean.'],
  ['kettle-3', 'A kettle with a thermostat holds the water at the temperature you choose.'],
  ['boiler-1', 'The boiler heats the whole house; service the boiler once a year.'],
  ['boiler-2', 'A condensing boiler saves gas compared with an old model.'],
  ['boiled', 'Boiled eggs take seven minutes for a firm yolk.'],
  ['espresso-1', 'The espresso machine grinds beans fresh for every cup.'],
  ['espresso-2', 'Clean the espresso machine steam wand after frothing milk.'],
  ['zorblax', 'The Zorblax blender crushes ice and purees soup in seconds.'],
  ['descaling', 'Descaling tablets dissolve limescale in coffee machines and irons.'],
];

async function newDataset(name: string): Promise<DatasetRow> {
  const { data } = await createDataset({ client: service.client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: name } });
  return (await db()('datasets').where({ id: data!.id }).first()) as DatasetRow;
}

async function addChunks(target: DatasetRow, chunks: [string, string][]): Promise<void> {
  const { data, response } = await createChunk({
    client: service.client(),
    headers: { 'SVC-Dataset': target.id },
    body: chunks.map(([tracking_id, text]) => ({ tracking_id, chunk_html: `<p>${text}</p>` })),
  });
  expect(response.status).toBe(200);
  for (const chunk of data!.chunk_metadata as T.ChunkMetadata[]) ids.set(chunk.tracking_id!, chunk.id);
}

async function vocabulary(target: DatasetRow): Promise<Map<string, number>> {
  const rows: { word: string; chunks: number }[] = await db()('dataset_words').where({ dataset_id: target.id }).select('word', 'chunks');
  return new Map(rows.map((r) => [r.word, Number(r.chunks)]));
}

const correct = (text: string, options: Partial<T.TypoOptions> = {}, quoteNegated = false) =>
  correctTypos(db(), dataset.id, text, { correct_typos: true, ...options }, quoteNegated);

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Query text' } })).data!.id;
  dataset = await newDataset('appliances');
  await addChunks(dataset, CHUNKS);
});
afterAll(async () => {
  await service?.stop();
});

describe(`dataset vocabulary (${mode})`, () => {
  it('counts the chunks holding each surface word, lowercase', async () => {
    const words = await vocabulary(dataset);
    expect(words.get('kettle')).toBe(3);
    expect(words.get('boiler')).toBe(2);
    expect(words.get('zorblax')).toBe(1);
    expect(words.get('the')).toBeGreaterThanOrEqual(5);
    expect(words.has('Kettle')).toBe(false);
  });

  it('follows updates and deletes, and forgets words no chunk holds', async () => {
    const other = await newDataset('vocabulary churn');
    await addChunks(other, [
      ['a', 'Quokkas live on Rottnest island.'],
      ['b', 'A quokka smiles for photographs.'],
    ]);
    expect(await vocabulary(other)).toEqual(
      new Map([
        ['quokkas', 1],
        ['live', 1],
        ['on', 1],
        ['rottnest', 1],
        ['island', 1],
        ['a', 1],
        ['quokka', 1],
        ['smiles', 1],
        ['for', 1],
        ['photographs', 1],
      ]),
    );

    const headers = { 'SVC-Dataset': other.id };
    expect(
      (await updateChunk({ client: service.client(), headers, body: { tracking_id: 'a', chunk_html: 'A wombat digs on the island.' } })).response.status,
    ).toBe(204);
    let words = await vocabulary(other);
    expect(words.has('quokkas')).toBe(false);
    expect(words.has('rottnest')).toBe(false);
    expect(words.get('a')).toBe(2);
    expect(words.get('on')).toBe(1);
    expect(words.get('wombat')).toBe(1);

    // A change that leaves the text alone leaves the counts alone.
    await updateChunk({ client: service.client(), headers, body: { tracking_id: 'a', metadata: { colour: 'brown' } } });
    expect(await vocabulary(other)).toEqual(words);

    await deleteChunk({ client: service.client(), headers, path: { chunk_id: ids.get('b')! } });
    words = await vocabulary(other);
    expect(words.has('quokka')).toBe(false);
    expect(words.get('a')).toBe(1);
    // The other dataset's vocabulary is its own.
    expect((await vocabulary(dataset)).has('wombat')).toBe(false);
  });
});

describe(`typo correction (${mode})`, () => {
  it('corrects a misspelt word to the dataset word one swap away, keeping capitals and punctuation', async () => {
    expect(await correct('kettle thermostta')).toMatchObject({ text: 'kettle thermostat', corrected: true });
    expect(await correct('Thermostta?')).toMatchObject({ text: 'Thermostat?', corrected: true });
  });

  it('leaves correct words, English words the dataset lacks, and short words alone', async () => {
    expect(await correct('kettle descaling')).toMatchObject({ text: 'kettle descaling', corrected: false });
    expect(await correct('bicycle')).toMatchObject({ text: 'bicycle', corrected: false });
    expect(await correct('ketle')).toMatchObject({ corrected: true, text: 'kettle' });
    expect(await correct('ktl')).toMatchObject({ corrected: false });
  });

  it('among corrections as close, prefers the word more chunks hold', async () => {
    // boilen is one letter from both boiler (2 chunks) and boiled (1 chunk).
    expect((await correct('boilen')).text).toBe('boiler');
  });

  it('does not correct the words of disable_on_word, nor quoted words when quotes are honoured', async () => {
    expect(await correct('thermostta', { disable_on_word: ['Thermostta'] })).toMatchObject({ text: 'thermostta', corrected: false });
    expect(await correct('"thermostta" kettel', {}, true)).toMatchObject({ text: '"thermostta" kettle', corrected: true });
    expect((await correct('"thermostta"', {}, false)).text).toBe('"thermostat"');
  });

  it('allows one or two edits by word length, as the ranges say', async () => {
    // dezcalimg: nine letters, two edits from descaling.
    expect((await correct('dezcalimg')).text).toBe('descaling');
    expect((await correct('dezcalimg', { two_typo_word_range: { min: 10 } })).corrected).toBe(false);
    expect((await correct('dezcalimg', { one_typo_word_range: { min: 5, max: 12 }, two_typo_word_range: { min: 20 } })).corrected).toBe(false);
    // kettel: six letters, one swap from kettle.
    expect((await correct('kettel')).text).toBe('kettle');
    expect((await correct('kettel', { one_typo_word_range: { min: 7 } })).corrected).toBe(false);
    expect((await correct('kettel', { one_typo_word_range: { min: 6, max: 6 } })).corrected).toBe(true);
  });

  it("requires the dataset's non-English words unless told not to", async () => {
    expect((await correct('zorblax kettle')).required).toEqual(['zorblax']);
    expect((await correct('zorblax kettle', { prioritize_domain_specifc_words: false })).required).toEqual([]);
  });

  it('refuses a range whose max is below its min, naming it', async () => {
    const error = await correct('kettel', { one_typo_word_range: { min: 6, max: 4 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).message).toMatch(/typo_options\.one_typo_word_range: max \(4\) is below min \(6\)/);
  });

  it('searches the corrected text and reports it', async () => {
    const prepared = await prepareQueries(service.services, dataset, { query: 'espreso machine', typo_options: { correct_typos: true } });
    expect(prepared.correctedQuery).toBe('espresso machine');
    expect(prepared.queries).toEqual([{ text: 'espresso machine', weight: 1 }]);
    const found = await retrieveQueries(service.services, 'bm25', prepared, { dataset, limit: 2, offset: 0 });
    expect(found.hits.map((h) => trackingOf(h.id)).sort()).toEqual(['espresso-1', 'espresso-2']);
    expect((await prepareQueries(service.services, dataset, { query: 'espresso machine', typo_options: { correct_typos: true } })).correctedQuery).toBeNull();
  });
});

describe('weighted fusion', () => {
  const hits = (...names: string[]) => names.map((id, i) => ({ id, score: 10 - i }));

  it('adds weight / (60 + rank) over the lists, best first', () => {
    const fused = fuseWeightedLists([
      { hits: hits('a', 'b', 'c'), weight: 1 },
      { hits: hits('c', 'b'), weight: 2 },
    ]);
    expect(fused.map((h) => h.id)).toEqual(['c', 'b', 'a']);
    expect(fused[0].score).toBeCloseTo(1 / 63 + 2 / 61, 10);
  });

  it('lets a negative weight lower chunks but never bring one in, and drops chunks it cancels', () => {
    const fused = fuseWeightedLists([
      { hits: hits('a', 'b'), weight: 1 },
      { hits: hits('a', 'z'), weight: -1 },
    ]);
    expect(fused.map((h) => h.id)).toEqual(['b']);
  });
});

describe.each(['semantic', 'fulltext', 'hybrid', 'bm25'] as SearchType[])(`search type %s (${mode})`, (type) => {
  const run = async (query: T.QueryTypes, more: { use_quote_negated_terms?: boolean; remove_stop_words?: boolean } = {}, limit = 10) => {
    const prepared = await prepareQueries(service.services, dataset, { query, ...more });
    return (await retrieveQueries(service.services, type, prepared, { dataset, limit, offset: 0 })).hits.map((h) => trackingOf(h.id));
  };

  it('ranks by the weighted queries: the heavier query first', async () => {
    const espressoFirst = await run(
      [
        { query: 'kettle', weight: 1 },
        { query: 'espresso machine', weight: 3 },
      ],
      {},
      3,
    );
    expect(espressoFirst[0]).toMatch(/^espresso/);
    const kettleFirst = await run(
      [
        { query: 'kettle', weight: 3 },
        { query: 'espresso machine', weight: 1 },
      ],
      {},
      3,
    );
    expect(kettleFirst[0]).toMatch(/^kettle/);
  });

  it('with quotes honoured, returns only chunks with the quoted phrase and none with a -word', async () => {
    const quoted = await run('"steam wand" espresso', { use_quote_negated_terms: true });
    expect(quoted).toEqual(['espresso-2']);
    const negated = await run('kettle -descaling', { use_quote_negated_terms: true });
    expect(negated.length).toBeGreaterThan(0);
    expect(negated).not.toContain('kettle-2');
    expect(negated).not.toContain('descaling');
    // Without the option the minus sign is an ordinary character: descaling is searched for.
    if (type !== 'semantic') expect(await run('kettle -descaling')).toContain('descaling');
  });

  it('searches without stop words when asked', async () => {
    const prepared = await prepareQueries(service.services, dataset, { query: 'the boiler of the house', remove_stop_words: true });
    expect(prepared.queries[0].text).toBe('boiler house');
    expect((await run('the boiler of the house', { remove_stop_words: true }, 1))[0]).toBe('boiler-1');
  });
});

describe('query parsing', () => {
  it('splits quoted phrases and -words off the searched text', () => {
    expect(parseQuery('"steam wand" -milk -"old model" espresso', { quoteNegated: true, removeStopWords: false })).toEqual({
      text: 'steam wand espresso',
      required: ['steam wand'],
      excluded: ['milk', 'old model'],
    });
    expect(parseQuery('"steam wand" -milk', { quoteNegated: false, removeStopWords: false })).toEqual({ text: 'steam wand milk', required: [], excluded: [] });
  });
});

describe(`scoring options (${mode})`, () => {
  const ranked = async (type: SearchType, query: string, scoring_options?: T.ScoringOptions) => {
    const prepared = await prepareQueries(service.services, dataset, { query, scoring_options });
    return (await retrieveQueries(service.services, type, prepared, { dataset, limit: 10, offset: 0 })).hits.map((h) => trackingOf(h.id));
  };

  it.each(['fulltext', 'bm25'] as SearchType[])('%s: a fulltext boost lifts the chunks with the phrase terms of the query', async (type) => {
    // Boosting either word puts a chunk with that word first: the boost, not the engine's own order.
    expect((await ranked(type, 'boiler espresso', { fulltext_boost: { phrase: 'espresso', boost_factor: 4 } }))[0]).toMatch(/^espresso/);
    expect((await ranked(type, 'boiler espresso', { fulltext_boost: { phrase: 'boilers', boost_factor: 4 } }))[0]).toMatch(/^boiler/);
    // A phrase sharing no term with the query changes nothing.
    expect(await ranked(type, 'boiler espresso', { fulltext_boost: { phrase: 'kettle', boost_factor: 4 } })).toEqual(await ranked(type, 'boiler espresso'));
  });

  it('hybrid: the boosted keyword list moves the phrase chunks up', async () => {
    // Fused scores, not positions: equal fused scores are ordered by chunk id, which differs per run.
    const scored = async (scoring_options?: T.ScoringOptions) => {
      const prepared = await prepareQueries(service.services, dataset, { query: 'boiler espresso', scoring_options });
      const { hits } = await retrieveQueries(service.services, 'hybrid', prepared, { dataset, limit: 10, offset: 0 });
      return new Map(hits.map((h) => [trackingOf(h.id), h.score]));
    };
    const plain = await scored();
    const boosted = await scored({ fulltext_boost: { phrase: 'espresso', boost_factor: 4 } });
    const lead = (scores: Map<string | undefined, number>) => scores.get('espresso-1')! - scores.get('boiler-1')!;
    expect(lead(boosted)).toBeGreaterThan(lead(plain));
  });

  it('semantic: a semantic boost moves the query towards the phrase', async () => {
    expect((await ranked('semantic', 'kettle'))[0]).toMatch(/^kettle/);
    expect((await ranked('semantic', 'kettle', { semantic_boost: { phrase: 'espresso machine steam wand', distance_factor: 0.9 } }))[0]).toBe('espresso-2');
  });

  it("hybrid: a semantic boost lifts the phrase's chunk through the semantic list", async () => {
    const rank = (list: (string | undefined)[]) => (list.includes('espresso-2') ? list.indexOf('espresso-2') : Infinity);
    const plain = rank(await ranked('hybrid', 'kettle'));
    const boosted = rank(await ranked('hybrid', 'kettle', { semantic_boost: { phrase: 'espresso machine steam wand', distance_factor: 0.9 } }));
    expect(boosted).toBeLessThan(plain);
  });

  it('refuses a negative boost factor, naming it', async () => {
    const error = await prepareQueries(service.services, dataset, {
      query: 'kettle',
      scoring_options: { fulltext_boost: { phrase: 'kettle', boost_factor: -2 } },
    }).catch((e: unknown) => e);
    expect((error as HttpError).message).toMatch(/^scoring_options\.fulltext_boost\.boost_factor: must be a finite number, at least 0/);
  });
});
